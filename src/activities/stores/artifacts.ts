/**
 * The Node side of artifact offloading, shared by the tool activity and the inline runtime: an output
 * over the threshold is stored by content hash (the tool-result store, where capped results' full
 * outputs are too) and replaced by its reference; read_artifact pages a stored output back.
 */
import { readArtifactInput } from '../../core/builtin-tools';
import { artifactPage, artifactReference, shouldOffload, type ArtifactSource } from '../../core/context/artifacts';
import { utf8Length } from '../../core/bytes';
import type { ToolResultStore } from './tool-results';

const READ_PAGE_CHARS = 20_000;

export interface OffloadedResult {
  content: string;
  isError: boolean;
  /** Set when the output was offloaded: its ref in the store and its UTF-8 size. */
  artifact?: { ref: string; bytes: number };
}

/** The result as the model should see it: the output itself, or a reference to where it was stored. */
export async function offloadToolResult(
  store: ToolResultStore,
  result: { content: string; isError: boolean },
  source: ArtifactSource,
  offloadBytes: number | undefined,
): Promise<OffloadedResult> {
  if (!shouldOffload(result.content, offloadBytes)) return result;
  const ref = await store.save(result.content);
  if (ref === undefined) return result; // too short to be stored: only a threshold below the schema's minimum gets here
  return {
    content: artifactReference(result.content, ref, source),
    isError: result.isError,
    artifact: { ref, bytes: utf8Length(result.content) },
  };
}

/** One page of a stored output. Bad input or a missing ref: an error result the model reads. */
export async function readArtifact(store: ToolResultStore, raw: unknown): Promise<{ content: string; isError: boolean }> {
  const parsed = readArtifactInput.safeParse(raw);
  if (!parsed.success) return { content: `Invalid input: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, isError: true };
  const { ref, offset = 0, maxChars = READ_PAGE_CHARS } = parsed.data;
  const text = await store.read(ref);
  if (text === undefined) return { content: `No stored output ${ref} (it was never stored here, or it was collected).`, isError: true };
  return { content: artifactPage(text, ref, offset, maxChars), isError: false };
}
