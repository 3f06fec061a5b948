/**
 * The agents the side-by-side bench runs: the history-growth grower (compaction off) and the same
 * conversation with compaction on. The fake's context window is far above what the conversation
 * reaches, so compaction is decided before every model call (a recorded local activity) and never
 * happens: this measures what the decision costs when there is nothing to compact.
 */
const { agent, schema } = require('@fabric-harness/sdk');
const { grower, growTool, growPrompt, GROW_SYSTEM } = require('../fixtures/grower-agents.js');

const growerCompacting = agent({
  name: 'grower-compacting',
  input: schema.object({ calls: schema.number().int().positive() }),
  run: async ({ init, input }) => {
    const fabric = await init({
      system: GROW_SYSTEM,
      tools: [growTool],
      maxTurns: Math.max(1000, input.calls),
      compaction: { enabled: true },
    });
    const session = await fabric.session();
    const reply = await session.prompt(growPrompt(input.calls));
    return { reply, usage: session.usage() };
  },
});

module.exports = { grower, growerCompacting };
