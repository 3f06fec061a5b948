/**
 * @fabric-harness/sdk/strict — nothing injected: compaction stays off unless the agent sets it (so a
 * Temporal replay sees exactly the conversation that ran), and every agent must declare an input schema.
 */
import { z } from 'zod';
import { entrypoint } from '../core/entrypoint';

export const { agent, init } = entrypoint('strict');
export { z as schema };
export { tool } from '../core/tools';
export { builtinTools } from '../core/builtin-tools';
export { isEvent } from '../core/events';
export * from '../core/public-types';
