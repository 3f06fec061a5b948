/**
 * sessions-inline-list: listing inline sessions (listInlineSessions: the header line of each file) vs
 * loading every session whole (JsonlSessionStore.load: header + every entry, parsed and validated),
 * over 1,000 session files of realistic sizes in a temp directory.
 *
 * Each session has 20-200 entries (seeded, so every run has the same files): user prompts of ~100-400
 * characters, assistant replies of ~0.3-2 KB, and every fifth turn a tool call with a 1-6 KB result.
 * The files are written with the store's own save (temp file, fsync, rename). Times are medians of
 * several runs in this process (the files are in the page cache after the first run, as they are for
 * a CLI that lists sessions repeatedly).
 *
 *   BENCH_INLINE_SESSIONS=1000   how many session files (default 1000)
 */
'use strict';
const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { listInlineSessions, JsonlSessionStore } = require('../dist/index.js');

const SESSIONS = Number(process.env.BENCH_INLINE_SESSIONS ?? 1000);
const LIST_RUNS = 7;
const LOAD_RUNS = 3;

/** Deterministic pseudo-random numbers (mulberry32), so every run benches the same files. */
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'the a session file model agent tool result reply header entry list load disk page cache read write line json token context window summary'.split(' ');

function prose(random, chars) {
  let s = '';
  while (s.length < chars) s += `${WORDS[Math.floor(random() * WORDS.length)]} `;
  return s.slice(0, chars);
}

function conversation(random) {
  const target = 20 + Math.floor(random() * 181);
  const entries = [];
  for (let turn = 0; entries.length < target; turn++) {
    entries.push({ type: 'user', text: prose(random, 100 + Math.floor(random() * 300)) });
    if (turn % 5 === 4 && entries.length + 3 <= target) {
      const id = `toolu_${turn}`;
      entries.push({ type: 'assistant', content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `src/file-${turn}.ts` } }], stopReason: 'tool_use' });
      entries.push({ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: id, content: prose(random, 1000 + Math.floor(random() * 5000)) }] });
    }
    entries.push({
      type: 'assistant',
      content: [{ type: 'text', text: prose(random, 300 + Math.floor(random() * 1700)) }],
      stopReason: 'end_turn',
      usage: { inputTokens: 1000 + turn * 400, outputTokens: 200 },
    });
  }
  return entries;
}

function header(i, entries, now) {
  return {
    version: 1,
    id: `bench-${String(i).padStart(4, '0')}`,
    agent: 'bench-agent',
    title: `Bench session ${i}`,
    status: i % 3 === 0 ? 'needs-review' : 'in-progress',
    labels: i % 4 === 0 ? [{ name: 'priority', value: i % 5 }, { name: 'urgent' }] : [],
    flagged: i % 10 === 0,
    archived: false,
    createdAt: now - 86_400_000,
    lastUsedAt: now - i * 1000,
    lastMessageAt: now - i * 1000,
    messageCount: entries.length,
    settings: { model: 'claude-sonnet-4-5', workingDirectory: '/tmp' },
  };
}

async function median(runs, fn) {
  const times = [];
  let result;
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    result = await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], result };
}

module.exports = {
  name: 'sessions-inline-list',
  description: 'listInlineSessions (header lines only) vs loading every session, over 1,000 JSONL session files',
  async run(ctx) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-sessions-'));
    try {
      const store = new JsonlSessionStore({ dir });
      const random = rng(42);
      const now = Date.now();
      let entryCount = 0;
      const writeStart = Date.now();
      for (let i = 0; i < SESSIONS; i++) {
        const entries = conversation(random);
        entryCount += entries.length;
        await store.save(header(i, entries, now), entries);
      }
      const names = await fs.readdir(dir);
      const sizes = await Promise.all(names.map(async (n) => (await fs.stat(path.join(dir, n))).size));
      const totalBytes = sizes.reduce((a, b) => a + b, 0);
      ctx.log(`wrote ${SESSIONS} sessions (${entryCount} entries, ${ctx.bytes(totalBytes, { mb: true })}) in ${ctx.seconds(Date.now() - writeStart)}`);

      const list = await median(LIST_RUNS, () => listInlineSessions({ dir }));
      if (list.result.length !== SESSIONS) throw new Error(`listed ${list.result.length} sessions, expected ${SESSIONS}`);
      const loadAll = await median(LOAD_RUNS, async () => {
        let n = 0;
        for (const h of list.result) n += (await store.load(h.id)).entries.length;
        return n;
      });
      if (loadAll.result !== entryCount) throw new Error(`loaded ${loadAll.result} entries, expected ${entryCount}`);
      const row = (operation, m, runs) => ({
        operation,
        sessions: SESSIONS,
        'bytes on disk': ctx.bytes(totalBytes, { mb: true }),
        'median ms': m.ms.toFixed(1),
        runs,
      });
      return [
        row('listInlineSessions (headers only)', list, LIST_RUNS),
        row('load every session (header + entries)', loadAll, LOAD_RUNS),
        { operation: 'list speed-up', 'median ms': `${(loadAll.ms / list.ms).toFixed(1)}x` },
      ];
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
};
