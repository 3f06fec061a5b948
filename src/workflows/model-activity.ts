/**
 * The model activity as workflow code calls it: the transcript by reference (resent whole once if the
 * worker's store lacks it), the prelude stored first, its stream slot opened and closed, and its result
 * mapped, all in one Pending (../core/pending): every promise workflow code makes costs a stack
 * capture in Temporal's sandbox, on every replay too, so this path makes none beyond the activity's own.
 */
import { patched, type ActivityOptions } from '@temporalio/workflow';
import type { ModelActivityInput, ModelActivityResult } from '../wire/activity-contract';
import { TRANSCRIPT_STORE_MISS } from '../wire/activity-contract';
import { innermostApplicationFailure } from '../wire/failures';
import { jsonBytes } from '../core/bytes';
import { PayloadTooLargeError } from '../core/errors';
import { failedPending, thenSettle, toPromise, type Pending } from '../core/pending';
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
type Counted = <T>(call: () => Promise<T>) => Pending<T>;

export type ModelActivity = (req: ModelCallRequest, facts: DecisionFacts | undefined) => Pending<ModelActivityResult>;

export function createModelActivity(transport: ModelTransport, counted: Counted): ModelActivity {
  function modelActivity(req: ModelCallRequest, facts: DecisionFacts | undefined): Pending<ModelActivityResult> {
    const prelude = transport.unsentPrelude(req);
    if (prelude && patched(PRELUDE_FIRST_PATCH)) {
      // Once per conversation and run: the prelude's activity first, then the call (a promise chain).
      const stored = decoded(() => toPromise(counted(() => activities(modelOptions, 'store prelude').fhStorePrelude(prelude.value))));
      return thenSettle(stored, () => {
        transport.preludeStored(prelude.hash);
        return toPromise(modelCall(req, facts));
      });
    }
    return modelCall(req, facts);
  }

  function modelCall(req: ModelCallRequest, facts: DecisionFacts | undefined): Pending<ModelActivityResult> {
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
    const returned = (result: ModelActivityResult): ModelActivityResult => {
      closeModelStream(slot, result, Date.now());
      if (result.entry !== undefined) transport.called(req, input, result.stored, result.entry);
      return result;
    };
    const failed = (err: unknown): never => {
      closeModelStream(slot, undefined, Date.now());
      throw err;
    };
    // A worker without this transcript (another machine, a cleared store): send it whole, once.
    const resentOrFailed = (err: unknown): Promise<ModelActivityResult> => {
      if (innermostApplicationFailure(err)?.type !== TRANSCRIPT_STORE_MISS) return failed(decodedFailure(err));
      closeModelStream(slot, undefined, Date.now());
      slot = openModelStream();
      input = withFacts(transport.input(req, false));
      return decoded(() => toPromise(call(input))).then(returned, failed);
    };
    try {
      return thenSettle(call(input), returned, resentOrFailed);
    } catch (err) {
      closeModelStream(slot, undefined, Date.now());
      return failedPending(decodedFailure(err));
    }
  }

  return modelActivity;
}
