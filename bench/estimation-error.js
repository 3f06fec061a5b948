'use strict';
/**
 * Token-estimation error of both methods against the provider's count (the scripted fake server's
 * deterministic tokenizer, reached through the real SDK client): the heuristic (chars/4, density-aware
 * for base64-heavy tool results) and the usage-anchored estimate (last reported input + output tokens +
 * the heuristic for entries added since). One growing conversation per kind of content.
 */
const { FakeAnthropicServer, say } = require('../dist/testing');
const { createAnthropicClient, callMessages } = require('../dist/activities/models/anthropic/messages');
const { estimateContextTokens, anchoredEstimate, usageAnchor } = require('../dist/core/tokens');

const prose = (i) => `Turn ${i}. The build failed because the cache key ignored the lockfile; I changed it and reran the pipeline. `.repeat(6);
const code = (i) => `function step${i}(input: Record<string, number>): number {\n  return Object.values(input).reduce((a, b) => a + b * ${i}, 0);\n}\n`.repeat(5);
const json = (i) => JSON.stringify({ id: i, items: Array.from({ length: 12 }, (_, k) => ({ k, name: `item-${k}`, ok: k % 2 === 0 })) });
const base64 = (i) => Buffer.from(Array.from({ length: 18000 }, (_, k) => (k * 31 + i * 7) % 256)).toString('base64');

const KINDS = { prose, code, 'json tool results': json, 'base64 tool results (24 KB)': base64 };
const TURNS = 12;

async function conversation(fake, client, make) {
  const system = 'You are a careful engineer.';
  const tools = [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];
  const entries = [];
  let anchor;
  const errors = { heuristic: [], anchored: [] };
  for (let i = 0; i < TURNS; i++) {
    const id = `toolu_${i}`;
    if (i === 0) entries.push({ type: 'user', text: prose(0) });
    else {
      entries.push({ type: 'assistant', content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `f${i}` } }] });
      entries.push({ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: id, content: make(i) }] });
    }
    // Entries after the last response are user-side; the last assistant entry is the anchor's response.
    const heuristic = estimateContextTokens({ system, tools, entries }).total;
    const anchored = anchoredEstimate({ anchor, entries, system, tools }).total;
    fake.enqueue(say(prose(i).slice(0, 200)));
    const res = await callMessages(client, { model: 'claude-sonnet-5-5', maxTokens: 1024, system, tools, entries });
    const truth = res.usage.inputTokens;
    errors.heuristic.push((heuristic - truth) / truth);
    if (anchor) errors.anchored.push((anchored - truth) / truth);
    entries.push(res.entry);
    anchor = usageAnchor(res.usage, entries.length - 1);
  }
  return errors;
}

const pct = (x) => `${(x * 100).toFixed(1)}%`;
const meanAbs = (xs) => xs.reduce((a, x) => a + Math.abs(x), 0) / xs.length;
const maxAbs = (xs) => Math.max(...xs.map(Math.abs));

module.exports = {
  name: 'estimation-error',
  description: 'token-estimation error (heuristic vs usage-anchored) against the fake server counts',
  async run(ctx) {
    const fake = await FakeAnthropicServer.start({ contextWindow: 10_000_000 });
    const client = createAnthropicClient({ apiKey: 'bench', baseURL: fake.url });
    const rows = [];
    try {
      for (const [kind, make] of Object.entries(KINDS)) {
        ctx.log(kind);
        const e = await conversation(fake, client, make);
        rows.push({
          content: kind,
          'heuristic mean |err|': pct(meanAbs(e.heuristic)),
          'heuristic max |err|': pct(maxAbs(e.heuristic)),
          'anchored mean |err|': pct(meanAbs(e.anchored)),
          'anchored max |err|': pct(maxAbs(e.anchored)),
          'anchored better by': `${(meanAbs(e.heuristic) / Math.max(meanAbs(e.anchored), 1e-9)).toFixed(1)}x`,
        });
      }
    } finally {
      await fake.stop();
    }
    return rows;
  },
};
