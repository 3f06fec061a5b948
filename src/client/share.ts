import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { renderSharePage } from '../core/share/page';
import type { RedactOptions } from '../core/share/redact';
import { getSession } from './sessions';
import { attachmentStore, sniff } from './attachments';
import { attachmentKey, isImage } from '../core/attachments';
import type { Entry } from '../core/entries';
import type { TranscriptStore } from '../activities/stores/transcript-store';

export interface ShareOptions {
  /** Write the page here (0644, atomically); the HTML is returned either way. */
  out?: string;
  /** More paths to hide besides the working directory and the home directory (e.g. the store). */
  redactPaths?: string[];
  /** Where the attachments' bytes are, to show images inline (default: the client's harness plugin's store). */
  store?: TranscriptStore;
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
  const images = await shareImages(attachmentStore(client, options.store), entries);
  const html = renderSharePage({ title: info.title ?? id, sessionId: id, agent: info.agent, sharedAt: Date.now(), entries, images }, redact);
  if (!options.out) return { html };
  const out = path.resolve(options.out);
  const tmp = `${out}.${process.pid}.tmp`;
  await fs.writeFile(tmp, html, { mode: 0o644 });
  await fs.rename(tmp, out);
  return { html, path: out };
}

/** At most this many bytes of images go into one page (the rest are named, not drawn). */
const SHARE_IMAGE_BYTES = 20 * 1024 * 1024;

/** The session's images, base64 by hash: read from the store, kept only when they hash to their reference and are what they say. */
async function shareImages(store: TranscriptStore, entries: readonly Entry[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let total = 0;
  for (const e of entries) {
    for (const a of e.type === 'user' ? (e.attachments ?? []) : []) {
      if (!isImage(a.mediaType) || a.masked || out.has(a.hash) || total + a.size > SHARE_IMAGE_BYTES) continue;
      const bytes = await store.get(attachmentKey(a.hash)).catch(() => undefined);
      if (!bytes || createHash('sha256').update(bytes).digest('hex') !== a.hash || sniff(bytes) !== a.mediaType) continue;
      out.set(a.hash, Buffer.from(bytes).toString('base64'));
      total += a.size;
    }
  }
  return out;
}
