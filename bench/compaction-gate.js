'use strict';
/**
 * compaction-gate: one long scripted session (600 model calls, seeded; tool-heavy, standing
 * instructions, failing tests, type errors and failing scripts, pasted logs) run through the SDK's
 * threshold compaction with three scripted summarisers — faithful, one that drops a random 30% of the
 * facts, one that returns an empty or off-topic summary — without the compaction gate and with it.
 * After each compaction: the facts that must survive (rules, open errors, changed files, decisions,
 * identifiers, task, next step) found in what the model receives, and four probes against the
 * generator's truth at that point (every rule given so far, every open error, every changed file, the
 * next step). No model, no Temporal: about two seconds.
 */
// The evaluation is TypeScript beside the bench (not shipped): loaded through the tests' swc hook.
require('../test/support/swc-register.js');
const { generateSession, compareGate, PROBES } = require('./context-eval');

const SEED = 1;
const MODEL_CALLS = 600;
const pct = (t) => `${t.kept}/${t.total} (${t.total ? Math.floor((100 * t.kept) / t.total) : 100}%)`;
const pair = (off, on) => `${off.kept}/${off.total} → ${on.kept}/${on.total}`;

module.exports = {
  name: 'compaction-gate',
  description: 'facts kept and probes answered after each compaction, three summarisers, without and with the gate (600 calls)',
  async run(ctx) {
    const session = generateSession({ seed: SEED, modelCalls: MODEL_CALLS });
    ctx.log(`seed ${SEED}: ${session.entries.length} entries, ${MODEL_CALLS} model calls`);
    const rows = [];
    for (const { summariser, off, on } of await compareGate(session, { seed: SEED })) {
      const row = {
        summariser,
        compactions: `${off.compactions} / ${on.compactions}`,
        'facts kept, no gate': pct(off.facts),
        'facts kept, gate': pct(on.facts),
        'probes, no gate': pct(off.probes),
        'probes, gate': pct(on.probes),
        restated: on.restated,
      };
      // Per probe: answered without the gate → with it.
      for (const p of PROBES) row[p] = pair(off.byProbe[p], on.byProbe[p]);
      rows.push(row);
    }
    return rows;
  },
};
