/**
 * Which types a public signature of the package reaches that a user cannot name: the check behind
 * test/unit/public-types.test.ts. A user's `const a = agent({...})` compiled with `declaration: true` must
 * write every type its inferred type mentions, and can only name what the package's `exports` entries
 * export (TS2883 otherwise). So: start from every name the entries export, read its declaration in the
 * built .d.ts, follow every type name it mentions (through imports and re-exports) to its declaration,
 * and report each declaration reached that no entry exports.
 *
 * It reads declaration text with regular expressions, which is enough for the .d.ts files tsc writes
 * (one declaration per statement, no comments inside signatures that matter).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export const ENTRIES = ['index', 'strict/index', 'client/index', 'audit/index', 'worker/index', 'testing/index'];

interface Decl {
  file: string;
  name: string;
  text: string;
  /** Whether the module exports it (a local type alias that is not exported is expanded, not named). */
  exported: boolean;
  kind: string;
}

export interface Unnamable {
  /** The .d.ts, relative to dist/. */
  file: string;
  name: string;
  /** The entry (e.g. `client/index`) whose exports reached it first. */
  entry: string;
}

const ident = /[A-Za-z_$][\w$]*/;
const key = (file: string, name: string) => `${file}#${name}`;

/** The module specifiers a .d.ts loads: imports, re-exports and `import("…")` types. */
function moduleSpecifiers(text: string): string[] {
  const specs = [...text.matchAll(/(?:[}\s]from\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
  return [...new Set(specs)];
}

export class DeclarationGraph {
  private readonly texts = new Map<string, string>();
  constructor(private readonly dist: string) {}

  private read(file: string): string {
    let t = this.texts.get(file);
    if (t === undefined) {
      t = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      this.texts.set(file, t);
    }
    return t;
  }

  private resolveModule(from: string, spec: string): string | undefined {
    if (!spec.startsWith('.')) return undefined; // another package's type: its own business
    const base = path.resolve(path.dirname(from), spec.replace(/\.js$/, ''));
    return [`${base}.d.ts`, path.join(base, 'index.d.ts')].find((c) => existsSync(c));
  }

  /** The declaration `name` refers to inside `file` (declared there, imported or re-exported), if ours. */
  resolve(file: string, name: string, seen = new Set<string>()): Decl | undefined {
    if (seen.has(key(file, name))) return undefined;
    seen.add(key(file, name));
    const t = this.read(file);
    const own = this.declarationText(t, name);
    if (own !== undefined) return { file, name, ...own };
    for (const m of t.matchAll(/(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]/g)) {
      for (const part of m[1]!.split(',')) {
        const [orig, alias] = part.replace(/^\s*type\s+/, '').trim().split(/\s+as\s+/).map((s) => s.trim());
        if (orig && (alias ?? orig) === name) {
          const target = this.resolveModule(file, m[2]!);
          return target ? this.resolve(target, orig, seen) : undefined;
        }
      }
    }
    for (const m of t.matchAll(/import\s+\*\s+as\s+([\w$]+)\s+from\s*['"]([^'"]+)['"]/g)) {
      if (m[1] === name) return undefined; // a namespace import: its members are followed where used
    }
    for (const m of t.matchAll(/export\s+\*\s+from\s*['"]([^'"]+)['"]/g)) {
      const target = this.resolveModule(file, m[1]!);
      const found = target && this.resolve(target, name, seen);
      if (found) return found;
    }
    return undefined;
  }

  /** The names an entry exports. */
  exportedNames(file: string, seen = new Set<string>()): Set<string> {
    const out = new Set<string>();
    if (seen.has(file)) return out;
    seen.add(file);
    const t = this.read(file);
    const decl = /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:interface|type|class|enum|const|function|let|var|namespace)\s+([A-Za-z_$][\w$]*)/gm;
    for (const m of t.matchAll(decl)) out.add(m[1]!);
    for (const m of t.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
      for (const part of m[1]!.split(',')) {
        const [orig, alias] = part.replace(/^\s*type\s+/, '').trim().split(/\s+as\s+/).map((s) => s.trim());
        if (orig) out.add(alias ?? orig);
      }
    }
    for (const m of t.matchAll(/export\s+\*\s+from\s*['"]([^'"]+)['"]/g)) {
      const target = this.resolveModule(file, m[1]!);
      if (target) for (const n of this.exportedNames(target, seen)) out.add(n);
    }
    return out;
  }

  /** The text of the top-level declaration of `name` in a .d.ts, through its end. */
  private declarationText(t: string, name: string): { text: string; exported: boolean; kind: string } | undefined {
    const re = new RegExp(
      `^(?:export\\s+)?(?:declare\\s+)?(?:abstract\\s+)?(interface|type|class|enum|const|function|let|var|namespace)\\s+${name.replace(/\$/g, '\\$')}\\b`,
      'gm',
    );
    const parts: string[] = [];
    let exported = false;
    let kind = '';
    for (const m of t.matchAll(re)) {
      exported ||= m[0].startsWith('export');
      kind = m[1]!;
      let depth = 0;
      let i = m.index!;
      for (; i < t.length; i++) {
        const c = t[i];
        if (c === '{' || c === '(' || c === '[') depth++;
        else if (c === '}' || c === ')' || c === ']') {
          depth--;
          if (depth === 0 && c === '}' && /^(interface|class|enum|namespace)$/.test(m[1]!)) break;
        } else if (c === ';' && depth === 0) break;
      }
      parts.push(t.slice(m.index!, i + 1));
    }
    return parts.length ? { text: parts.join('\n'), exported, kind } : undefined;
  }

  /** Type names mentioned in a declaration, minus its own type parameters' names (approximately). */
  private mentioned(d: Decl): Array<{ file: string; name: string }> {
    const out: Array<{ file: string; name: string }> = [];
    const text = d.text.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, (s) => (/^['"]\./.test(s) ? s : "''"));
    for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)\.([A-Za-z_$][\w$]*)/g)) {
      const target = this.resolveModule(d.file, m[1]!);
      if (target) out.push({ file: target, name: m[2]! });
    }
    const withoutImports = text.replace(/import\(\s*["'][^"']+["']\s*\)\.[\w$]+/g, ' ');
    for (const m of withoutImports.matchAll(new RegExp(`(?<![.\\w$])${ident.source}`, 'g'))) {
      if (/^[A-Z]/.test(m[0])) out.push({ file: d.file, name: m[0] });
    }
    return out;
  }

  /** Every .d.ts of ours an entry's declarations load, following relative imports and re-exports. */
  reachableFiles(entries = ENTRIES): string[] {
    const seen = new Set<string>();
    const queue = entries.map((e) => path.join(this.dist, `${e}.d.ts`));
    while (queue.length > 0) {
      const file = queue.shift()!;
      if (seen.has(file) || !existsSync(file)) continue;
      seen.add(file);
      for (const spec of moduleSpecifiers(this.read(file))) {
        const target = this.resolveModule(file, spec);
        if (target) queue.push(target);
      }
    }
    return [...seen];
  }

  /**
   * The other packages our reachable declarations name (`from 'x'`, `import('x')`), each with the .d.ts
   * that names it: a consumer's compiler loads every one of them (with skipLibCheck: false it reports a
   * missing one, TS2307), so each must be a package an install always brings.
   */
  packagesNamed(entries = ENTRIES): Array<{ pkg: string; file: string }> {
    const out: Array<{ pkg: string; file: string }> = [];
    for (const file of this.reachableFiles(entries)) {
      for (const spec of moduleSpecifiers(this.read(file))) {
        if (spec.startsWith('.')) continue;
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        out.push({ pkg, file: path.relative(this.dist, file) });
      }
    }
    return out;
  }

  /** Declarations of ours reached from the entries' exports that no entry exports. */
  unnamable(entries = ENTRIES): Unnamable[] {
    const publicKeys = new Set<string>();
    const queue: Array<Decl & { entry: string }> = [];
    for (const entry of entries) {
      const f = path.join(this.dist, `${entry}.d.ts`);
      for (const n of this.exportedNames(f)) {
        const d = this.resolve(f, n);
        if (d) {
          publicKeys.add(key(d.file, d.name));
          queue.push({ ...d, entry });
        }
      }
    }
    const seen = new Set(queue.map((d) => key(d.file, d.name)));
    const missing: Unnamable[] = [];
    while (queue.length > 0) {
      const d = queue.shift()!;
      for (const ref of this.mentioned(d)) {
        const target = this.resolve(ref.file, ref.name);
        if (!target || seen.has(key(target.file, target.name))) continue;
        seen.add(key(target.file, target.name));
        const expandable = !target.exported && target.kind === 'type';
        if (!publicKeys.has(key(target.file, target.name)) && !expandable) {
          missing.push({ file: path.relative(this.dist, target.file), name: target.name, entry: d.entry });
        }
        queue.push({ ...target, entry: d.entry });
      }
    }
    return missing.sort((a, b) => `${a.file}:${a.name}`.localeCompare(`${b.file}:${b.name}`));
  }
}
