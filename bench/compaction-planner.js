'use strict';
/**
 * Compaction planner cost: the decision taken before every model call (estimate + cut), and the
 * planning of one compaction (split + render the slice + fallback summary), at 100, 1,000 and 10,000
 * entries. Both must grow no faster than linearly: the last column is time per entry.
 */
const { decideCompaction } = require('../dist/core/context/compaction/decide');
const { splitForCompaction } = require('../dist/core/context/compaction/cut');
const { renderEntriesForSummary } = require('../dist/core/context/compaction/render');
const { fallbackSummary } = require('../dist/core/context/compaction/fallback');
const { trackFileOperations } = require('../dist/core/context/compaction/files');
const { resolveCompactionSettings } = require('../dist/core/context/settings');

/** A realistic history: prompts, replies, and tool calls with results, ~600 characters per entry. */
function history(n) {
  const entries = [];
  const text = (i) => `step ${i}: ` + 'the agent looks at the code, runs the tests and writes down what it found. '.repeat(8);
  for (let i = 0; entries.length < n; i++) {
    if (i % 3 === 0) entries.push({ type: 'user', text: text(i) });
    else if (i % 3 === 1 && entries.length + 2 <= n) {
      const id = `toolu_${i}`;
      entries.push({ type: 'assistant', content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `src/file${i}.ts` } }] });
      entries.push({ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: id, content: text(i) }] });
    } else entries.push({ type: 'assistant', content: [{ type: 'text', text: text(i) }] });
  }
  return entries.slice(0, n);
}

/** Fastest of enough repetitions to take ~500 ms (noise — GC, the other core — only ever adds time). */
function time(fn) {
  fn();
  const samples = [];
  const deadline = Date.now() + 500;
  while (Date.now() < deadline || samples.length < 5) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return Math.min(...samples);
}

module.exports = {
  name: 'compaction-planner',
  description: 'time per compaction decision and per compaction plan at 100 / 1,000 / 10,000 entries',
  async run() {
    const rows = [];
    let base;
    for (const n of [100, 1000, 10000]) {
      const entries = history(n);
      const settings = resolveCompactionSettings({ keepRecentEntries: 20 }, undefined, 200000, { enabled: true });
      const decide = time(() => decideCompaction({ entries, settings, system: 'You are an agent.', tools: [] }));
      const plan = time(() => {
        const split = splitForCompaction(entries, 20);
        renderEntriesForSummary(split.toCompact);
        fallbackSummary(split.toCompact, split.previousSummary, trackFileOperations(split.toCompact));
      });
      base ??= { decide: decide / n, plan: plan / n };
      rows.push({
        entries: n.toLocaleString('en-US'),
        'decision ms': decide.toFixed(3),
        'decision µs/entry': ((decide / n) * 1000).toFixed(2),
        'vs 100 (per entry)': `${(decide / n / base.decide).toFixed(2)}x`,
        'plan ms': plan.toFixed(3),
        'plan µs/entry': ((plan / n) * 1000).toFixed(2),
        'plan vs 100 (per entry)': `${(plan / n / base.plan).toFixed(2)}x`,
      });
    }
    return rows;
  },
};
