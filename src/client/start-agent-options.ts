/**
 * `startAgent`'s options, checked before anything is started: every key one it knows (Temporal's start
 * options and `streaming`), so a misspelt one (`workflowExecutionTimeOut`, `searchAttribute`) is named at once
 * instead of ignored, and the values the harness reads itself of the type it reads them as.
 */
import type { WorkflowStartOptions } from '@temporalio/client';
import { z } from 'zod';
import { anyValueOf, parseWith } from '../core/validate';

export type StartAgentOptions = Partial<Omit<WorkflowStartOptions, 'args'>> & {
  workflowId: string;
  /** false: the run's model calls are made without streaming (its stream still carries every durable event). Default true. */
  streaming?: boolean;
};

/**
 * Every key of StartAgentOptions. Typed as a record over its keys, so the build fails when a Temporal release
 * adds a start option (or drops one) until the list says so: a new option is never refused as misspelt.
 */
const START_AGENT_KEYS: Record<keyof StartAgentOptions, true> = {
  workflowId: true,
  taskQueue: true,
  streaming: true,
  memo: true,
  searchAttributes: true,
  typedSearchAttributes: true,
  workflowIdReusePolicy: true,
  workflowIdConflictPolicy: true,
  workflowExecutionTimeout: true,
  workflowRunTimeout: true,
  workflowTaskTimeout: true,
  retry: true,
  cronSchedule: true,
  followRuns: true,
  startDelay: true,
  staticSummary: true,
  staticDetails: true,
  versioningOverride: true,
  priority: true,
  requestEagerStart: true,
  typeInfo: true,
};

const startAgentOptionsSchema = z
  .object({
    ...anyValueOf(START_AGENT_KEYS),
    workflowId: z.string().min(1),
    taskQueue: z.string().min(1).optional(),
    streaming: z.boolean().optional(),
    memo: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/** The options as given, once every key is known and the harness's own values have their types (INVALID_INPUT naming the field). */
export function checkStartAgentOptions(options: unknown): StartAgentOptions {
  parseWith(startAgentOptionsSchema, options, 'startAgent options');
  return options as StartAgentOptions;
}
