/**
 * The options a client call waits or reads with, checked before anything is sent (INVALID_INPUT naming the
 * field). Each was used in arithmetic or timers unchecked: a `timeoutMs` of '5s' made the wait's deadline
 * NaN, a `livePollMs` of -1 polled Temporal without pause, a `from` that is not a number read from offset NaN.
 */
import { z } from 'zod';
import { parseWith } from '../core/validate';
import type { WaitLimits } from './wait-bounds';

/** An AbortSignal, or one from another realm that acts like one (jsdom, a test environment). */
const abortSignal = z.custom<AbortSignal>(
  (v) => v instanceof AbortSignal || (typeof v === 'object' && v !== null && typeof (v as AbortSignal).aborted === 'boolean' && typeof (v as AbortSignal).addEventListener === 'function'),
  { message: 'Invalid input: expected an AbortSignal' },
);

/** WaitLimits' fields; the rest of a call's options are the call's own (its keys are not checked here). */
export const waitLimitsSchema = z.object({
  timeoutMs: z.number().finite().nonnegative().optional(),
  signal: abortSignal.optional(),
});

/** A stream's options, all of them: an unknown key is named (`fromm`). */
const streamOptionsSchema = z
  .object({
    from: z.number().int().optional(),
    signal: abortSignal.optional(),
    livePollMs: z.number().finite().positive().optional(),
    transport: z.looseObject({}).optional(),
    broker: z.looseObject({}).optional(),
  })
  .strict();

/** An approval's or a denial's options: the note the model reads, and how long to wait for the session to take it. */
export interface DecisionOptions extends WaitLimits {
  note?: string;
}

/** All of them: an unknown key (`timeout`) is named, not taken for no bound. */
const decisionOptionsSchema = waitLimitsSchema.extend({ note: z.string().optional() }).strict();

/** A decision on a waiting tool call as the update carries it, and how long its sender waits. */
export interface DecisionRequest {
  request: { callId: string; approved: boolean; note?: string };
  limits: WaitLimits;
}

/** `approve(callId, note)` as before, or `approve(callId, { note, timeoutMs, signal })`, checked. */
export function decisionRequest(callId: string, approved: boolean, options: string | DecisionOptions | undefined): DecisionRequest {
  const { note, ...limits } = typeof options === 'object' ? (parseWith(decisionOptionsSchema, options, 'decision options') as DecisionOptions) : { note: options };
  return { request: note === undefined ? { callId, approved } : { callId, approved, note }, limits };
}

/** A plan decision's options (`approvePlan`, `declinePlan`), all of them: a misspelt key is named at once. */
const planDecisionSchema = waitLimitsSchema.extend({ mode: z.string().optional(), note: z.string().optional() }).strict();

/** The plan decision's own fields, and the wait's limits, checked. */
export function planDecision<T extends { mode?: string; note?: string }>(options: T & WaitLimits): { decision: Omit<T, keyof WaitLimits>; limits: WaitLimits } {
  parseWith(planDecisionSchema, options, 'plan decision options');
  const { body, limits } = splitWaitLimits(options);
  return { decision: body, limits };
}

/**
 * What a call sends, and the wait's limits (`timeoutMs`, `signal`), split: the limits bound the client's
 * wait and never reach the workflow. Anything but an object is sent as it is, so the receiver's validator
 * names it (`reset(null)`, `compact(42)` are refused there, as they were before the limits existed).
 */
export function splitWaitLimits<T>(options: T & WaitLimits): { body: Omit<T, keyof WaitLimits>; limits: WaitLimits } {
  if (typeof options !== 'object' || options === null) return { body: options, limits: {} };
  const { timeoutMs, signal, ...body } = options;
  return { body, limits: { timeoutMs, signal } };
}

/**
 * A message's options (`prompt`, `send`), all of them: a misspelt key (`timeout`, `messageID`) is named at
 * once instead of being ignored, which for `timeout` meant a wait with no bound. The values of
 * `attachments` and `store` are checked where they are used (storeAttachments).
 */
const promptOptionsSchema = waitLimitsSchema
  .extend({ messageId: z.string().min(1).optional(), attachments: z.array(z.unknown()).optional(), store: z.unknown().optional() })
  .strict();

/** How a prompt's stream reads (`promptStream`). */
const streamReadKeys = { transport: z.looseObject({}).optional(), livePollMs: z.number().finite().positive().optional() };

/** A run's prompt options (`AgentHandle.prompt`): the conversation it goes to, the update's id, the wait's limits. */
const runPromptOptionsSchema = waitLimitsSchema
  .extend({ conversationId: z.string().min(1).optional(), sessionId: z.string().min(1).optional(), updateId: z.string().min(1).optional() })
  .strict();

const promptOptionSchemas = {
  'session prompt': promptOptionsSchema,
  'session promptStream': promptOptionsSchema.extend(streamReadKeys).strict(),
  'run prompt': runPromptOptionsSchema,
  // The stream's message id is the prompt's update id.
  'run promptStream': runPromptOptionsSchema.omit({ updateId: true }).extend({ messageId: z.string().min(1).optional(), ...streamReadKeys }).strict(),
} as const;

/** Checks a prompt's options before anything is stored or sent (INVALID_INPUT naming the field). */
export function checkPromptOptions(options: unknown, call: keyof typeof promptOptionSchemas): void {
  parseWith(promptOptionSchemas[call], options ?? {}, `${call.split(' ')[1]} options`);
}

/** Options that are only a wait's limits (`interrupt`, `cancelMessage`): a misspelt key is named at once. */
export function checkOnlyWaitLimits(limits: unknown, what: string): void {
  parseWith(waitLimitsSchema.strict(), limits ?? {}, what);
}

export function checkWaitLimits(limits: { timeoutMs?: unknown; signal?: unknown } | undefined, what: string): void {
  if (limits === undefined) return;
  parseWith(waitLimitsSchema, { timeoutMs: limits.timeoutMs, signal: limits.signal }, what);
}

export function checkStreamOptions(options: unknown): void {
  parseWith(streamOptionsSchema, options ?? {}, 'stream options');
}

/** A web chat's `sendTimeoutMs`: a wait of 0 would end every send at once, so it must be positive. */
export function checkSendTimeout(sendTimeoutMs: unknown): void {
  parseWith(z.object({ sendTimeoutMs: z.number().finite().positive().optional() }), { sendTimeoutMs }, 'chat handler options');
}
