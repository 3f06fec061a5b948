import * as path from 'node:path';
import { TEST_AGENT_MODULES } from '../../support/bundle-once';

/**
 * The agent modules whose workflows the recorded histories ran: the integration suites' modules, the
 * memory-flush agents (that suite bundles them on its own) and the history-only agents. The recorder's
 * worker runs them, and the replay suite bundles the same list.
 */
export const HISTORY_AGENT_MODULES = [
  ...TEST_AGENT_MODULES,
  path.resolve(__dirname, '../../fixtures/memory-agents.ts'),
  path.resolve(__dirname, 'history-agents.ts'),
];
