/**
 * @fabric-harness/sdk — the default entry. Compaction is on by default: a headless agent that fails at
 * the context window is the wrong default. For exact, replay-stable conversations use
 * `@fabric-harness/sdk/strict`.
 */
import { z } from 'zod';
import { entrypoint } from './core/entrypoint';

export const { agent, init } = entrypoint('default');
export { z as schema };
export { tool } from './core/tools';
export { builtinTools } from './core/builtin-tools';
export { isEvent } from './core/events';
export * from './core/public-types';
