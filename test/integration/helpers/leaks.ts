import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { temporal } from '@temporalio/proto';

/**
 * Everything a history says, as text: strings as they are and every payload's bytes decoded (history
 * JSON holds payload data as base64, where a plain text search never finds a leaked secret).
 */
export function historyText(history: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (v === null || v === undefined) return;
    if (typeof v === 'string') out.push(v);
    else if (v instanceof Uint8Array) out.push(Buffer.from(v).toString('utf8'));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object') Object.values(v as Record<string, unknown>).forEach(walk);
    else out.push(String(v));
  };
  walk(history);
  return out.join('\n');
}

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
  const child = spawn(
    process.execPath,
    ['-r', path.resolve(__dirname, '../../support/swc-register.js'), path.join(__dirname, 'env-worker.ts')],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('worker-ready')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`worker process exited with ${code} before it was ready:\n${stderr}`)));
  });
}
