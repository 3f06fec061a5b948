/**
 * The agents the side-by-side bench runs: the history-growth grower (compaction off) and the same
 * conversation with compaction on. The fake's context window is far above what the conversation
 * reaches, so compaction is decided before every model call (recorded with the model call) and never
 * happens: this measures what the decision costs when there is nothing to compact.
 */
const { grower, growerAgent } = require('../fixtures/grower-agents.js');

const growerCompacting = growerAgent('grower-compacting', true);

module.exports = { grower, growerCompacting };
