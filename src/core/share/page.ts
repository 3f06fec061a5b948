import { isImage, type AttachmentRef } from '../attachments';
import type { Entry } from '../entries';
import { redactText, type RedactOptions } from './redact';

/**
 * A shared session as one self-contained, read-only HTML page. Everything in it that came from the
 * conversation (the user's text, the model's, tool inputs and outputs) is escaped text: the page has no
 * script, no external resource, and a Content-Security-Policy that would block both anyway, so markup in
 * model output is shown, never run. Secrets and sandbox paths are redacted first (./redact.ts).
 */
export interface SharePageInput {
  title: string;
  sessionId?: string;
  agent?: string;
  /** Epoch ms (shown as UTC). */
  sharedAt: number;
  entries: readonly Entry[];
  /**
   * Images to show inline, base64 by hash (the share reads them from the store). An image is drawn only
   * as a data: URL of a raster type (png, jpeg, gif, webp: never SVG, which can hold script) whose data is
   * plain base64; any other attachment is a line with its name.
   */
  images?: ReadonlyMap<string, string>;
}

const TOOL_TEXT_LIMIT = 20_000;

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;max-width:860px;margin:2rem auto;padding:0 1rem;color:#1b1b1f;background:#fff}
header{border-bottom:1px solid #ddd;margin-bottom:1rem}h1{font-size:1.4rem;margin:.2rem 0}.meta{color:#666;font-size:.85rem}
.entry{margin:1rem 0;padding:.6rem .8rem;border-radius:8px}.user{background:#eef3ff}.assistant{background:#f6f6f6}
.tool{background:#fff8e6;font-size:.9rem}.tool.error{background:#fdecec}.summary{background:#eefaf0;font-size:.9rem}
.role{font-weight:600;font-size:.8rem;text-transform:uppercase;color:#555;margin-bottom:.3rem}
.file{font-size:.85rem;color:#555;margin-top:.3rem}.file img{display:block;max-width:100%;max-height:480px;margin-top:.3rem;border:1px solid #ddd}
.text,pre{white-space:pre-wrap;word-break:break-word;margin:0}pre{font:13px/1.4 ui-monospace,monospace}
`;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** One attachment: its name (escaped text), and the image itself when it is a raster type with its bytes at hand. */
function attachmentHtml(a: AttachmentRef, images: ReadonlyMap<string, string> | undefined, t: (s: string) => string): string {
  const label = `<div class="file">Attachment: ${t(a.name)} (${t(a.mediaType)}, ${a.size} bytes)`;
  const data = isImage(a.mediaType) && !a.masked ? images?.get(a.hash) : undefined;
  // The media type comes from the fixed list (isImage), the data is checked to be base64: nothing else reaches the URL.
  if (data === undefined || !BASE64.test(data)) return `${label}</div>`;
  return `${label}<img alt="${t(a.name)}" src="data:${a.mediaType};base64,${data}"></div>`;
}

export function renderSharePage(input: SharePageInput, redact: RedactOptions = {}): string {
  const t = (s: string) => escapeHtml(redactText(s, redact));
  const cut = (s: string) => (s.length > TOOL_TEXT_LIMIT ? `${s.slice(0, TOOL_TEXT_LIMIT)}\n…[${s.length - TOOL_TEXT_LIMIT} more characters]` : s);
  const names = new Map<string, string>();
  const blocks: string[] = [];
  for (const e of input.entries) {
    switch (e.type) {
      case 'user':
        blocks.push(`<section class="entry user"><div class="role">User</div><div class="text">${t(e.text)}</div>${(e.attachments ?? []).map((a) => attachmentHtml(a, input.images, t)).join('')}</section>`);
        break;
      case 'assistant':
        for (const b of e.content) {
          if (b.type === 'text') blocks.push(`<section class="entry assistant"><div class="role">Assistant</div><div class="text">${t(b.text)}</div></section>`);
          else if (b.type === 'tool_use') {
            names.set(b.id, b.name);
            blocks.push(`<section class="entry tool"><div class="role">Tool call: ${t(b.name)}</div><pre>${t(cut(JSON.stringify(b.input, null, 2) ?? ''))}</pre></section>`);
          }
        }
        break;
      case 'tool_results':
        for (const r of e.results) {
          const name = names.get(r.tool_use_id) ?? 'tool';
          blocks.push(`<section class="entry tool${r.is_error ? ' error' : ''}"><div class="role">${r.is_error ? 'Tool error' : 'Tool result'}: ${t(name)}</div><pre>${t(cut(r.content))}</pre></section>`);
        }
        break;
      case 'summary':
        blocks.push(`<section class="entry summary"><div class="role">Summary of ${e.compactedEntries} earlier entries</div><div class="text">${t(e.summary)}</div></section>`);
        break;
    }
  }
  const meta = [input.agent ? `agent ${t(input.agent)}` : undefined, input.sessionId ? `session ${t(input.sessionId)}` : undefined, `shared ${new Date(input.sharedAt).toISOString()}`]
    .filter(Boolean)
    .join(' · ');
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${t(input.title)}</title><style>${STYLE}</style></head>`,
    `<body><header><h1>${t(input.title)}</h1><div class="meta">${meta}</div></header>`,
    `<main>${blocks.join('\n') || '<p class="meta">(no messages)</p>'}</main>`,
    '</body></html>',
    '',
  ].join('\n');
}
