/**
 * Fenced code blocks of a Markdown file, with the HTML comment that annotates each one.
 *
 * An annotation is the `<!-- kind: attrs -->` comment on the line(s) just before the fence (blank lines
 * between are allowed). Attributes are `key=value` pairs separated by spaces; a value with spaces is
 * quoted (`reason="a fragment: …"`), a list is comma-separated (`project=calc-cjs,calc-esm`).
 */

export interface CodeBlock {
  /** The Markdown file, relative to the repository root (for messages). */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's info string's first word: ts, js, bash, … */
  lang: string;
  /** The code, without the fences, ending with a newline. */
  code: string;
  annotation?: Annotation;
}

export interface Annotation {
  kind: string;
  attrs: Record<string, string>;
  /** The comment as written, for messages. */
  raw: string;
}

const ANNOTATION = /^<!--\s*([a-z-]+):\s*([\s\S]*?)\s*-->$/;
const ATTR = /([a-z-]+)=(?:"([^"]*)"|(\S+))/g;

export function parseAnnotation(comment: string): Annotation | undefined {
  const m = ANNOTATION.exec(comment.trim());
  if (!m) return undefined;
  const attrs: Record<string, string> = {};
  const rest = m[2];
  for (const a of rest.matchAll(ATTR)) attrs[a[1]] = a[2] ?? a[3];
  // A bare first word (`<!-- seed: test/seeds/x.ts -->`) is the `value` attribute.
  const bare = rest.replace(ATTR, '').trim();
  if (bare) attrs.value = bare;
  return { kind: m[1], attrs, raw: comment.trim() };
}

export function codeBlocks(markdown: string, file: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+|~~~+)\s*([\w+-]*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i].startsWith(indent + fence); i++) body.push(lines[i].slice(indent.length));
    if (i >= lines.length) throw new Error(`${file}:${start + 1}: code block is never closed`);
    blocks.push({ file, line: start + 1, lang, code: body.join('\n') + '\n', annotation: annotationBefore(lines, start) });
  }
  return blocks;
}

/** The comment ending on the last non-blank line before `index`, if that line ends one. */
function annotationBefore(lines: string[], index: number): Annotation | undefined {
  let end = index - 1;
  while (end >= 0 && lines[end].trim() === '') end--;
  if (end < 0 || !lines[end].trim().endsWith('-->')) return undefined;
  let begin = end;
  while (begin >= 0 && !lines[begin].includes('<!--')) begin--;
  if (begin < 0) return undefined;
  return parseAnnotation(lines.slice(begin, end + 1).join('\n'));
}
