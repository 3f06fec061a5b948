/**
 * For sandbox-policy.test.ts: a tiny reader for the SBPL we generate (s-expressions, strings with \" and
 * \\ escapes, #"regex" strings, ; comments) that throws on anything malformed, and two small evaluators
 * that say what a path is inside each rendering: 'rw', 'ro' or 'absent'.
 */
export type Sexp = string | { str: string } | Sexp[];

/** Reads every top-level form; throws on unbalanced parentheses or an unterminated string. */
export function readSexps(text: string): Sexp[] {
  let i = 0;
  const skip = () => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i]!)) i++;
      if (text[i] !== ';') return;
      while (i < text.length && text[i] !== '\n') i++;
    }
  };
  const readString = (): { str: string } => {
    i++; // the opening quote
    let out = '';
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') {
        if (!['"', '\\'].includes(text[i + 1]!)) throw new Error(`unknown escape \\${text[i + 1]} at ${i}`);
        i++;
      }
      out += text[i++];
    }
    if (i >= text.length) throw new Error('unterminated string');
    i++;
    return { str: out };
  };
  const read = (): Sexp => {
    skip();
    if (i >= text.length) throw new Error('unexpected end of profile');
    const c = text[i]!;
    if (c === ')') throw new Error(`unbalanced ')' at ${i}`);
    if (c === '"') return readString();
    if (c === '#' && text[i + 1] === '"') {
      i++;
      return readString();
    }
    if (c === '(') {
      i++;
      const list: Sexp[] = [];
      for (;;) {
        skip();
        if (i >= text.length) throw new Error("unbalanced '(': missing ')'");
        if (text[i] === ')') {
          i++;
          return list;
        }
        list.push(read());
      }
    }
    const start = i;
    while (i < text.length && !/[\s()";]/.test(text[i]!)) i++;
    return text.slice(start, i);
  };
  const forms: Sexp[] = [];
  for (skip(); i < text.length; skip()) forms.push(read());
  return forms;
}

const isList = (s: Sexp): s is Sexp[] => Array.isArray(s);

/** An operation name matches `file-write*` style globs and `default`. */
function opMatches(pattern: string, op: string): boolean {
  if (pattern === 'default') return true;
  return pattern.endsWith('*') ? op.startsWith(pattern.slice(0, -1)) : pattern === op;
}

function stringValue(s: Sexp, params: Record<string, string>): string {
  if (isList(s) && s[0] === 'param') {
    const name = (s[1] as { str: string }).str;
    if (!(name in params)) throw new Error(`(param "${name}") has no -D value`);
    return params[name]!;
  }
  if (typeof s === 'object' && !isList(s)) return s.str;
  throw new Error(`not a string: ${JSON.stringify(s)}`);
}

function filterMatches(f: Sexp, p: string, params: Record<string, string>): boolean {
  if (!isList(f)) throw new Error(`bad filter ${JSON.stringify(f)}`);
  const [head, ...rest] = f;
  switch (head) {
    case 'subpath': {
      const base = stringValue(rest[0]!, params);
      return p === base || p.startsWith(base === '/' ? '/' : `${base}/`);
    }
    case 'literal':
    case 'path':
      return p === stringValue(rest[0]!, params);
    case 'require-all':
      return rest.every((g) => filterMatches(g, p, params));
    case 'vnode-type':
      return true; // /dev/null is the device here
    case 'regex':
      return new RegExp((rest[0] as { str: string }).str).test(p);
    default:
      return false; // target, global-name, sysctl-name…: never a file path
  }
}

/** Seatbelt's decision for `op` on path `p` ('' for operations without a path): the last matching rule wins. */
export function sbplDecide(profile: string, params: Record<string, string>, op: string, p = ''): 'allow' | 'deny' {
  let decision: 'allow' | 'deny' = 'deny';
  for (const form of readSexps(profile)) {
    if (!isList(form) || (form[0] !== 'allow' && form[0] !== 'deny')) continue;
    const ops = form.slice(1).filter((x): x is string => typeof x === 'string');
    const filters = form.slice(1).filter(isList);
    if (!ops.some((o) => opMatches(o, op))) continue;
    if (filters.length === 0 || filters.some((f) => filterMatches(f, p, params))) decision = form[0];
  }
  return decision;
}

export type Access = 'rw' | 'ro' | 'absent';

export function sbplAccess(profile: string, params: Record<string, string>, p: string): Access {
  if (sbplDecide(profile, params, 'file-write-data', p) === 'allow') return 'rw';
  return sbplDecide(profile, params, 'file-read-data', p) === 'allow' ? 'ro' : 'absent';
}

/** What bubblewrap's argv makes of the host's `p`: later mounts cover earlier ones at and below their target. */
export function bwrapAccess(args: readonly string[], p: string): Access | 'link' {
  const mounts: Array<{ target: string; access: Access | 'link' }> = [];
  const add = (target: string, access: Access | 'link') => {
    for (let k = mounts.length - 1; k >= 0; k--) if (within(mounts[k]!.target, target)) mounts.splice(k, 1);
    mounts.push({ target, access });
  };
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === '--bind') add(args[k + 2]!, 'rw');
    else if (a === '--ro-bind' || a === '--ro-bind-try') add(args[k + 2]!, 'ro');
    else if (a === '--symlink') add(args[k + 2]!, 'link');
    // The sandbox's own /tmp, /proc, /dev: nothing of the host's is there.
    else if (a === '--tmpfs' || a === '--proc' || a === '--dev') add(args[k + 1]!, 'absent');
  }
  const covering = mounts.filter((m) => within(p, m.target)).sort((x, y) => y.target.length - x.target.length)[0];
  return covering?.access ?? 'absent'; // the top level is bwrap's own tmpfs, remounted read-only and empty
}

const within = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);

/** The paths an `(allow file-write* …)` rule of the profile names (its parameters resolved). */
export function writeRulePaths(profile: string, params: Record<string, string>): string[] {
  const strings = (s: Sexp): string[] => {
    if (isList(s)) {
      if (s[0] === 'param') return [stringValue(s, params)];
      if (s[0] === 'vnode-type') return [];
      return s.flatMap(strings);
    }
    return typeof s === 'object' ? [s.str] : [];
  };
  return readSexps(profile)
    .filter((f): f is Sexp[] => isList(f) && f[0] === 'allow' && f.some((x) => typeof x === 'string' && x.startsWith('file-write')))
    .flatMap((f) => f.filter(isList).flatMap(strings));
}
