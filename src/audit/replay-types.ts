/** The shapes replayHistory takes and gives, apart so replay-explain can use them without importing replay. */
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import type { TranscriptStore } from '../activities/stores/transcript-store';
import type { LoadedHistory } from './history-file';
import type { ModelInputMismatch } from './replay-inputs';

export interface ReplayOptions {
  /** Module path(s) of the agents: the current workflow code to replay against. */
  agents: string | string[];
  /** Fetches the history when the source is a workflow id. */
  client?: Client;
  /**
   * A bundle made earlier for the same modules (skips bundling). One from bundleAgents() has no command
   * trace, so a divergence describes only the recorded side; one from bundleForReplay() names what the
   * code does now too.
   */
  workflowBundle?: WorkflowBundle;
  /** Resolves offloaded payloads in the history (the store the workers use; default FH_STORE_DIR / OS temp dir). */
  store?: TranscriptStore;
  workflowId?: string;
  runId?: string;
  /**
   * Also compare every model call's input (model, max tokens, system prompt and tools by prelude hash,
   * the messages sent) with what the recorded run sent. A plain replay does not: Temporal compares
   * commands, not activity inputs, so a changed system prompt or tool definition replays "ok".
   * Needs the bundle made here, or a `workflowBundle` from bundleForReplay(agents, { strictInputs: true }).
   */
  strictInputs?: boolean;
}

/** One command as workflow code issued it, or as history recorded it. */
export interface ReplayCommand {
  kind: 'activity' | 'local_activity' | 'timer' | 'child_workflow' | 'signal_external' | 'continue_as_new' | 'complete' | 'fail' | 'cancel' | 'other';
  /** Activity / local activity / timer sequence number (shared by activities and local activities). */
  seq?: number;
  /** Activity type, workflow type, signal name. */
  name?: string;
  /** For fhTool: the tool's name; for fail: the error message. */
  detail?: string;
  /** For fhModel under strictInputs: the input the code schedules. */
  input?: unknown;
}

export type ReplayResult =
  | {
      ok: true;
      workflowId: string;
      events: number;
      source: LoadedHistory['source'];
      /** With strictInputs: model calls whose inputs matched, and those that could not be read (offloaded). */
      strictInputs?: { compared: number; unreadable: number };
    }
  | {
      ok: false;
      workflowId: string;
      events: number;
      source: LoadedHistory['source'];
      /**
       * nondeterminism: the code issues different commands; unknown_agent: the modules do not define the
       * run's agent; workflow_task_failure: the code threw; input_mismatch (strictInputs only): same
       * commands, but a model call's input differs; replay_error: anything else.
       */
      kind: 'nondeterminism' | 'unknown_agent' | 'workflow_task_failure' | 'input_mismatch' | 'replay_error';
      /** input_mismatch: the first model call that differs, and in which field. */
      inputMismatch?: ModelInputMismatch;
      /** The history event at which the run and the code diverge, when known. */
      eventId?: number;
      recorded?: ReplayCommand;
      /** What the code issues instead (undefined when unknown; kind 'other' with no name: nothing). */
      current?: ReplayCommand;
      /** The SDK's message. */
      error: string;
      /** The same, in plain words, with what to do about it. */
      explanation: string;
    };
