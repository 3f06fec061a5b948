import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { temporal } from '@temporalio/proto';
import { decodedText } from '../../../src/activities/stores/store-gc';
import { startTsProcess } from '../../support/worker-process-control';

/**
 * Everything a history says, as text: strings as they are and every payload's bytes decoded (history
 * JSON holds payload data as base64, where a plain text search never finds a leaked secret).
 */
export const historyText = (history: unknown): string => decodedText(history);

/** Every blob in a store directory as text; payload blobs also decoded (their data is raw bytes in a protobuf). */
export async function storeText(dir: string): Promise<string> {
  const out: string[] = [];
  const visit = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await visit(p);
      else {
        const bytes = await fs.readFile(p);
        out.push(bytes.toString('utf8'));
        try {
          out.push(historyText(temporal.api.common.v1.Payload.decode(bytes)));
        } catch {
          /* not a payload blob */
        }
      }
    }
  };
  await visit(dir);
  return out.join('\n');
}

/** Starts helpers/env-worker.ts in a child process with `env` added; resolves once it polls. */
export function startEnvWorker(env: Record<string, string>): Promise<ChildProcess> {
  return startTsProcess(path.join(__dirname, 'env-worker.ts'), env);
}
