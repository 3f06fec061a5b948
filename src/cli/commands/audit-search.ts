/* eslint-disable @typescript-eslint/no-require-imports */
/** fh audit search: questions across runs, over a folder of bundles and/or a namespace's visibility; JSON lines out. */
import { promises as fs } from 'node:fs';
import { flag, str, type Parsed } from '../args';
import { asCliError, connect, type Command, type Io } from '../context';
import { EXIT, notFound, usage } from '../errors';
import type { SearchHit, SearchQuery } from '../../audit/bundle/search';

export const searchCommand: Command = {
  name: 'audit search',
  summary: 'find tool calls, model calls, decisions, failures or runs across bundles (and visibility); JSON lines',
  usage: ['audit search [--dir <folder>] [--visibility] [--tool <name>] [--args <regex>] [--model <m>] [--decision <kind>] [--error <code>] [--since <time>] [--until <time>] [--label <name[=value]>]'],
  description:
    'With --dir: reads every bundle in the folder (offline) and prints one JSON object per matching record: a tool\n' +
    'call (--tool, --args: a regular expression over its arguments as JSON), a model call (--model), a compaction\n' +
    'decision (--decision compact|none|<reason>), a failure (--error <code>); all given filters must match one\n' +
    'record. With only --label / --since / --until, each matching run is a hit. Without --dir (or with --visibility):\n' +
    "the namespace's visibility for what it indexes (model, label, start time); a hit lists the filters it could not\n" +
    'check ("unchecked"): export those runs and search the bundles.',
  connects: true,
  options: {
    dir: { type: 'string', value: '<folder>', help: 'a folder of bundles (fh audit export)' },
    visibility: { type: 'boolean', help: "with --dir: also search the namespace's visibility (without --dir it is what is searched)" },
    tool: { type: 'string', value: '<name>', help: 'tool calls of this tool' },
    args: { type: 'string', value: '<regex>', help: "tool calls whose arguments (JSON) match this regular expression" },
    model: { type: 'string', value: '<model>', help: 'model calls to this model' },
    decision: { type: 'string', value: '<kind>', help: 'compaction decisions: compact, none, or a reason' },
    error: { type: 'string', value: '<code>', help: 'records that failed with this error code' },
    since: { type: 'string', value: '<time>', help: 'at or after this time (ISO 8601)' },
    until: { type: 'string', value: '<time>', help: 'at or before this time (ISO 8601)' },
    label: { type: 'string', value: '<name[=value]>', help: 'runs with this session label' },
  },
  examples: [
    "fh audit search --dir bundles/ --tool bash --args 'rm -rf'",
    'fh audit search --dir bundles/ --decision compact --since 2026-01-01T00:00:00Z',
    'fh audit search --namespace prod --model claude-sonnet-4-5 --label team=payments   # visibility',
  ],
  run: async (p, io) => {
    if (p.positionals.length) throw usage(`unexpected argument '${p.positionals[0]}' (the folder goes in --dir)`);
    const q = queryFrom(p);
    const { searchBundles, searchVisibility } = require('../../audit/bundle/search') as typeof import('../../audit/bundle/search');
    const print = (h: SearchHit) => io.out(JSON.stringify(h));
    const dir = str(p, 'dir');
    if (dir) {
      const st = await fs.stat(dir).catch(() => undefined);
      if (!st?.isDirectory()) throw notFound(`bundle folder ${dir} not found`);
      for await (const h of searchBundles(dir, q, (file, why) => io.err(`skipped ${file}: ${why}`))) print(h);
    }
    if (!dir || flag(p, 'visibility')) {
      const conn = await connect(p);
      try {
        for await (const h of searchVisibility(conn.client, q)) print(h);
      } catch (err) {
        throw asCliError(err, { settings: conn.settings });
      } finally {
        await conn.close();
      }
    }
    return EXIT.OK;
  },
};

function queryFrom(p: Parsed): SearchQuery {
  const time = (name: string): Date | undefined => {
    const v = str(p, name);
    if (v === undefined) return undefined;
    const t = Date.parse(v);
    if (Number.isNaN(t)) throw usage(`--${name}: '${v}' is not a time (use ISO 8601, e.g. 2026-01-31T12:00:00Z)`);
    return new Date(t);
  };
  let args: RegExp | undefined;
  const pattern = str(p, 'args');
  if (pattern !== undefined) {
    try {
      args = new RegExp(pattern);
    } catch (err) {
      throw usage(`--args: not a regular expression (${(err as Error).message})`);
    }
  }
  const q: SearchQuery = {};
  for (const [opt, key] of [['tool', 'tool'], ['model', 'model'], ['decision', 'decision'], ['error', 'errorCode'], ['label', 'label']] as const) {
    const v = str(p, opt);
    if (v !== undefined) q[key] = v;
  }
  if (args) q.args = args;
  const since = time('since');
  const until = time('until');
  if (since) q.since = since;
  if (until) q.until = until;
  return q;
}

export type { Io };
