/**
 * Memory files in the inline runtime: the same extraction and storage as the fhFlushMemory activity,
 * called directly. In `memoryDir` when given (a private directory, as the worker's store), else in a
 * map shared by this process's runs.
 */
import type { MemoryPort } from '../core/context/memory';
import { updateMemory, type MemoryModelCall } from '../core/context/memory-extract';
import { MemoryFiles } from '../activities/stores/memory-files';
import { FileTranscriptStore, MemoryTranscriptStore } from '../activities/stores/transcript-store';

const inProcess = new MemoryTranscriptStore();

export function inlineMemoryPort(opts: { agentName: string; dir?: string; call: (model: string, connection?: string) => MemoryModelCall }): MemoryPort {
  const files = new MemoryFiles(opts.dir ? new FileTranscriptStore(opts.dir) : inProcess);
  return {
    agentName: opts.agentName,
    load: (key) => files.load(key),
    async flush(req) {
      const existing = await files.load(req.key);
      const update = await updateMemory(opts.call(req.model, req.connection), { existing: existing?.text, dropped: req.entries.slice(0, req.dropped), maxTokens: req.maxTokens });
      return files.save(req.key, update.text);
    },
  };
}
