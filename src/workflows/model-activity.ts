/**
 * The model activity as workflow code calls it: the transcript by reference (resent whole once if the
 * worker's store lacks it), the prelude stored first, its stream slot opened and closed, and its result
 * mapped in the same `then`. Every promise workflow code makes costs a stack capture in Temporal's
 * sandbox (see ./activity-calls), on every replay too, so this path makes as few as it can.
 */
import { patched, type ActivityOptions } from '@temporalio/workflow';
import type { ModelActivityInput, ModelActivityResult } from '../wire/activity-contract';
import { TRANSCRIPT_STORE_MISS } from '../wire/activity-contract';
import { innermostApplicationFailure } from '../wire/failures';
import { jsonBytes } from '../core/bytes';
import { PayloadTooLargeError } from '../core/errors';
import type { ModelCallRequest } from '../core/ports';
import type { DecisionFacts } from '../core/context/compaction/decide';
import { activities, decoded, decodedFailure, retry } from './activity-calls';
import type { ModelTransport } from './model-transport';
import { closeModelStream, openModelStream } from './stream/model-calls';

/**
 * Since this patch a conversation's prelude (system prompt, tool specs) is stored by an activity of its
 * own before its first model call, so model call inputs carry only its hash (the largest of them was
 * the first call, with the specs).
 */
const PRELUDE_FIRST_PATCH = 'fh-prelude-first';

/**
 * Model activities heartbeat while they wait for the provider (activities.ts), so a worker that dies
 * mid-call is noticed within the heartbeat timeout and the call is retried elsewhere in seconds, not
 * after the 10-minute start-to-close timeout.
 */
export const modelOptions: ActivityOptions = { startToCloseTimeout: '10 minutes', heartbeatTimeout: '10s', retry };
/** Temporal's limit for one payload is 2 MB; stay clear of it (external storage offloads large ones). */
const MAX_SCHEDULED_PAYLOAD_BYTES = 1_900_000;

export function assertFits(what: string, value: unknown): void {
  const bytes = jsonBytes(value);
  if (bytes > MAX_SCHEDULED_PAYLOAD_BYTES) throw new PayloadTooLargeError(what, bytes, MAX_SCHEDULED_PAYLOAD_BYTES);
}

/** Runs an activity call, counted for the host (see createTemporalPorts). */
type Counted = <T>(call: () => Promise<T>) => Promise<T>;

export type ModelActivity = <R>(req: ModelCallRequest, facts: DecisionFacts | undefined, then: (result: ModelActivityResult) => R) => Promise<R>;

export function createModelActivity(transport: ModelTransport, counted: Counted): ModelActivity {
  /** `then` maps the result inside the same `then` that closes the call's stream: no promise of its own. */
  function modelActivity<R>(req: ModelCallRequest, facts: DecisionFacts | undefined, then: (result: ModelActivityResult) => R): Promise<R> {
    const prelude = transport.unsentPrelude(req);
    if (prelude && patched(PRELUDE_FIRST_PATCH)) {
      return decoded(() => counted(() => activities(modelOptions, 'store prelude').fhStorePrelude(prelude.value))).then(() => {
        transport.preludeStored(prelude.hash);
        return modelCall(req, facts, then);
      });
    }
    return modelCall(req, facts, then);
  }

  function modelCall<R>(req: ModelCallRequest, facts: DecisionFacts | undefined, then: (result: ModelActivityResult) => R): Promise<R> {
    const call = (input: ModelActivityInput) => {
      assertFits('model call input', input);
      return counted(() => activities(modelOptions, `model ${req.model}`).fhModel(input));
    };
    // Its deltas stream at offsets of the run's stream (heartbeat details: not in history).
    let slot = openModelStream();
    // The input is not compared on replay: asking for the brief decision changes no command, so no patch.
    const withFacts = (input: ModelActivityInput): ModelActivityInput => {
      const decided = facts ? { ...input, decide: facts, briefDecision: true as const } : input;
      return slot ? { ...decided, stream: slot } : decided;
    };
    let input = withFacts(transport.input(req, true));
    const returned = (result: ModelActivityResult): R => {
      closeModelStream(slot, result, Date.now());
      if (result.entry !== undefined) transport.called(req, input, result.stored, result.entry);
      return then(result);
    };
    const failed = (err: unknown): never => {
      closeModelStream(slot, undefined, Date.now());
      throw err;
    };
    let first: Promise<ModelActivityResult>;
    try {
      first = call(input);
    } catch (err) {
      closeModelStream(slot, undefined, Date.now());
      return Promise.reject(decodedFailure(err));
    }
    return first.then(returned, (err: unknown) => {
      // A worker without this transcript (another machine, a cleared store): send it whole, once.
      if (innermostApplicationFailure(err)?.type !== TRANSCRIPT_STORE_MISS) return failed(decodedFailure(err));
      closeModelStream(slot, undefined, Date.now());
      slot = openModelStream();
      input = withFacts(transport.input(req, false));
      return decoded(() => call(input)).then(returned, failed);
    });
  }

  return modelActivity;
}
