import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { renderSharePage } from '../core/share/page';
import type { RedactOptions } from '../core/share/redact';
import { getSession } from './sessions';

export interface ShareOptions {
  /** Write the page here (0644, atomically); the HTML is returned either way. */
  out?: string;
  /** More paths to hide besides the working directory and the home directory (e.g. the store). */
  redactPaths?: string[];
}

/**
 * A session as one self-contained, read-only HTML page (`fh session share <id> --out file.html`):
 * the conversation as escaped text, no script, no external resource, secrets and the sandbox paths
 * redacted (core/share/redact.ts has the rule).
 */
export async function shareSession(client: Client, id: string, options: ShareOptions = {}): Promise<{ html: string; path?: string }> {
  const session = getSession(client, id);
  const info = await session.info();
  const entries = await session.messages();
  const redact: RedactOptions = { home: os.homedir(), paths: options.redactPaths ?? [], ...(info.settings.workingDirectory ? { workdir: info.settings.workingDirectory } : {}) };
  const html = renderSharePage({ title: info.title ?? id, sessionId: id, agent: info.agent, sharedAt: Date.now(), entries }, redact);
  if (!options.out) return { html };
  const out = path.resolve(options.out);
  const tmp = `${out}.${process.pid}.tmp`;
  await fs.writeFile(tmp, html, { mode: 0o644 });
  await fs.rename(tmp, out);
  return { html, path: out };
}
