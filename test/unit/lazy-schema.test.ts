import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { lazySchema } from '../../src/core/lazy-schema';
import { parseWith } from '../../src/core/validate';
import { InvalidInputError } from '../../src/core/errors';

/** A schema the way our modules define them, eagerly and lazily, with a count of builds. */
function pair() {
  let builds = 0;
  const build = () => {
    builds++;
    return z
      .object({
        name: z.string().min(1),
        tags: z.array(z.string()).optional(),
        kind: z.union([z.literal('a'), z.object({ deep: z.boolean() })]),
        extra: z.record(z.string(), z.number()).default({}),
      })
      .strict();
  };
  return { eager: build(), lazy: lazySchema(build), builds: () => builds };
}

describe('lazySchema', () => {
  it('builds nothing until the schema is first used, then once', () => {
    const { lazy, builds } = pair();
    expect(builds()).toBe(1); // the eager one
    const composite = lazySchema(() => z.object({ inner: lazy }));
    expect(builds()).toBe(1);
    expect(composite.parse({ inner: { name: 'x', kind: 'a' } })).toEqual({ inner: { name: 'x', kind: 'a', extra: {} } });
    expect(builds()).toBe(2);
    lazy.parse({ name: 'y', kind: { deep: true } });
    expect(builds()).toBe(2);
  });

  it('parses, refuses and names fields exactly as the schema itself does', () => {
    const { eager, lazy } = pair();
    const inputs: unknown[] = [
      { name: 'n', kind: 'a' },
      { name: 'n', tags: ['t'], kind: { deep: false }, extra: { x: 1 } },
      { name: '', kind: 'b' },
      { name: 'n', kind: 'a', unknown: 1 },
      'not an object',
      { name: 'n', kind: { deep: 'no' } },
    ];
    for (const input of inputs) {
      expect(lazy.safeParse(input)).toEqual(eager.safeParse(input));
      const said = (schema: z.ZodType) => {
        try {
          return parseWith(schema, input, 'options');
        } catch (err) {
          return err instanceof InvalidInputError ? `${err.code} ${err.message}` : err;
        }
      };
      expect(said(lazy)).toEqual(said(eager));
    }
  });

  it('composes like the schema: methods, shape, unions, instanceof, JSON Schema', () => {
    const { eager, lazy } = pair();
    expect(lazy instanceof z.ZodObject).toBe(true);
    expect(Object.keys(lazy.shape)).toEqual(Object.keys(eager.shape));
    expect(lazy.extend({ more: z.number() }).parse({ name: 'n', kind: 'a', more: 1 })).toEqual({ name: 'n', kind: 'a', extra: {}, more: 1 });
    expect(lazy.partial().parse({})).toEqual(eager.partial().parse({}));
    expect(lazy.optional().parse(undefined)).toBeUndefined();
    const event = lazySchema(() => z.object({ type: z.literal('e'), n: z.number() }));
    const union = z.discriminatedUnion('type', [event, z.object({ type: z.literal('f') })]);
    expect(union.parse({ type: 'e', n: 1 })).toEqual({ type: 'e', n: 1 });
    expect(union.safeParse({ type: 'g' }).success).toBe(false);
    expect(z.toJSONSchema(lazy)).toEqual(z.toJSONSchema(eager));
    expect(Object.getPrototypeOf(lazy)).toBe(Object.getPrototypeOf(eager));
    // Fields shared by several objects, spread into each (the stream events' common fields).
    const common = lazySchema(() => ({ at: z.number().optional(), callId: z.string().optional() }));
    expect(z.object({ ...common, type: z.literal('t') }).strict().parse({ type: 't', at: 1, callId: 'c' })).toEqual({ type: 't', at: 1, callId: 'c' });
    type Lazy = z.infer<typeof lazy>;
    const typed: Lazy = { name: 'n', kind: 'a', extra: {} };
    expect(lazy.parse(typed)).toEqual(typed);
  });
});

/**
 * Top-level declarations of workflow code's modules that build a zod schema when the module loads: each
 * would cost every workflow run its building time and every cached run its memory (see lazy-schema.ts).
 */
function eagerSchemas(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const file = path.join(d, e.name);
      if (e.isDirectory()) walk(file);
      else if (e.name.endsWith('.ts')) {
        const lines = fs.readFileSync(file, 'utf8').split('\n');
        lines.forEach((line, i) => {
          const m = /^(?:export )?(?:const|let) (\w+)(?::[^=]+)? =(.*)$/.exec(line);
          if (!m) return;
          // The declaration's text: this line and the indented or closing lines after it.
          let text = m[2]!;
          for (let j = i + 1; j < lines.length && /^(\s|\)|\]|\})/.test(lines[j]!); j++) text += `\n${lines[j]}`;
          if (/^(lazySchema\(|\(|async\b|function\b)/.test(text.trim())) return;
          // A lazySchema inside the declaration (a tool's `input`) builds nothing either: the rest of its line is dropped.
          const init = text.replace(/lazySchema\(\(\) =>[^\n]*/g, '').trim();
          if (/\bz\s*(\n\s*)?\.\w+\(/.test(init) || /^\w+Schema\s*(\n\s*)?\./.test(init)) found.push(`${path.relative(process.cwd(), file)}:${i + 1} ${m[1]}`);
        });
      }
    }
  };
  walk(dir);
  return found;
}

describe('workflow code builds no zod schema when its modules load', () => {
  it('core, wire and workflows: every top-level schema is a lazySchema', () => {
    const root = path.resolve(__dirname, '../../src');
    expect(['core', 'wire', 'workflows'].flatMap((d) => eagerSchemas(path.join(root, d)))).toEqual([]);
  });
});
