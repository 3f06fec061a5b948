/**
 * Identifier-shaped tokens of a prompt draft, for the prompt enhancer to look up in the working
 * directory: file paths, PascalCase, camelCase and snake_case names, and bare identifiers in backticks.
 * Common English words and language keywords are dropped; at most 8, in the order they appear.
 */
export const MAX_IDENTIFIERS = 8;

const STOPLIST = new Set(
  [
    // English that backticks or capitals often hold
    'the', 'and', 'for', 'with', 'this', 'that', 'from', 'into', 'what', 'when', 'where', 'which', 'should', 'would', 'could',
    'please', 'make', 'add', 'fix', 'use', 'file', 'files', 'code', 'test', 'tests', 'todo', 'readme', 'true', 'false',
    // language keywords and built-in type names
    'function', 'return', 'const', 'let', 'var', 'class', 'interface', 'type', 'enum', 'import', 'export', 'default',
    'async', 'await', 'new', 'null', 'undefined', 'void', 'string', 'number', 'boolean', 'object', 'any', 'unknown', 'never',
    'def', 'self', 'none', 'lambda', 'struct', 'impl', 'pub', 'mut', 'fn', 'func', 'package', 'public', 'private', 'static',
    'if', 'else', 'for', 'while', 'switch', 'case', 'break', 'continue', 'try', 'catch', 'finally', 'throw',
    // product names that look like identifiers
    'javascript', 'typescript', 'github', 'gitlab', 'nodejs', 'macos', 'iphone', 'openai', 'chatgpt',
  ],
);

const PATH = /(?:\.{1,2}\/|\/)?(?:[\w@.-]+\/)+[\w@.-]+|\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|json|md|py|go|rs|java|rb|css|scss|html|yml|yaml|toml|sql|sh|c|h|cpp|hpp|swift|kt)\b/g;
/** PATH without /g, for `.test`: a /g regex's `.test` starts at its lastIndex, left by the previous test (a second path failed). */
const HAS_PATH = new RegExp(PATH.source);
const BACKTICKED = /`([^`\s]{2,100})`/g;
const PASCAL = /\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b/g;
const CAMEL = /\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b/g;
const SNAKE = /\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b/g;
const BARE_IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

export function extractIdentifiers(text: string, max = MAX_IDENTIFIERS): string[] {
  // URLs are not paths in this repository: blanked out, same length, so positions keep their order.
  const draft = text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, (url) => ' '.repeat(url.length));
  const found: Array<{ at: number; token: string }> = [];
  const collect = (re: RegExp, pick: (m: RegExpExecArray) => string | undefined) => {
    for (const m of draft.matchAll(re)) {
      const token = pick(m as RegExpExecArray);
      if (token) found.push({ at: m.index ?? 0, token });
    }
  };
  collect(BACKTICKED, (m) => {
    const inner = m[1]!;
    // A bare identifier or a path; a backticked expression (`a + b`, `foo()`) is not looked up as is.
    const stripped = inner.replace(/\(\)$/, '');
    return BARE_IDENTIFIER.test(stripped) || HAS_PATH.test(stripped) ? stripped : undefined;
  });
  collect(PATH, (m) => m[0].replace(/[.,;:]+$/, ''));
  collect(PASCAL, (m) => m[0]);
  collect(CAMEL, (m) => m[0]);
  collect(SNAKE, (m) => m[0]);
  const out: string[] = [];
  const seen = new Set<string>();
  for (const { token } of found.sort((a, b) => a.at - b.at)) {
    const key = token.toLowerCase();
    if (seen.has(key) || STOPLIST.has(key) || token.length < 3) continue;
    // A name inside a path already taken (src/fooBar.ts then fooBar) is looked up once, through the path.
    if (out.some((t) => t.includes('/') && t.toLowerCase().includes(key))) continue;
    seen.add(key);
    out.push(token);
    if (out.length >= max) break;
  }
  return out;
}
