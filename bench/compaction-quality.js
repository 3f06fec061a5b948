'use strict';
/**
 * Compaction quality without a model: one scripted 300-call tool-heavy session (seeded), replayed
 * under each context strategy with a 50k-token window and the SDK's default threshold. Per strategy:
 * estimated tokens sent over all calls, and what the model still sees at the end — standing
 * instructions, files touched, open errors, the last test run. Summaries are the deterministic
 * fallback (no model here): a real summariser writes other prose, but carries user messages and files
 * the same way. The second block is the same session without pasted logs in user prompts.
 */
// The evaluation is TypeScript beside the bench (not shipped): loaded through the tests' swc hook.
require('../test/support/swc-register.js');
const { generateSession, compareStrategies, EVAL_CONTEXT_WINDOW_TOKENS } = require('./context-eval');

const SEED = 1;
const k = (n) => `${Math.round(n / 1000).toLocaleString('en-US')}k`;
const frac = (x) => `${x.kept}/${x.total}`;

module.exports = {
  name: 'compaction-quality',
  description: 'tokens sent and what survives (instructions, files, open errors, last test run) per context strategy, 300 calls',
  async run(ctx) {
    const rows = [];
    for (const pastedLogs of [true, false]) {
      const session = generateSession({ seed: SEED, modelCalls: 300, pastedLogs });
      ctx.log(`seed ${SEED}, pasted logs ${pastedLogs ? 'on' : 'off'}: ${session.entries.length} entries, window ${EVAL_CONTEXT_WINDOW_TOKENS}`);
      for (const r of await compareStrategies(session)) {
        rows.push({
          session: pastedLogs ? 'with pasted logs' : 'no pasted logs',
          strategy: r.strategy,
          calls: r.modelCalls,
          'tokens sent': k(r.tokensSent),
          'peak request': k(r.peakTokens),
          'calls over window': r.callsOverWindow,
          compactions: r.compactions,
          'summariser input': r.summarizerInputTokens > 0 ? k(r.summarizerInputTokens) : '0',
          instructions: frac(r.survival.instructions),
          files: frac(r.survival.files),
          'open errors': frac(r.survival.openErrors),
          'last evidence': r.survival.lastEvidence ? 'yes' : 'no',
        });
      }
    }
    return rows;
  },
};
