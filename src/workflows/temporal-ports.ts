import {
  ActivityFailure,
  ApplicationFailure,
  patched,
  proxyActivities,
  proxyLocalActivities,
  proxySinks,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { FabricActivities, ModelActivityInput, TranscriptRefPayload } from '../activities/contract';
import { TRANSCRIPT_STORE_MISS } from '../activities/contract';
import type { Entry } from '../core/entries';
import type { AgentEvent } from '../core/events';
import { ModelCallError, PayloadTooLargeError, type ModelErrorKind } from '../core/errors';
import { canonicalJson, hashString } from '../core/hash';
import type { RuntimePorts } from '../core/ports';
import type { FabricSinks } from './sinks';

/** The model lookup activity gets the agent's window (and looks nothing up): see resolveModel. */
const SKIP_WINDOW_LOOKUP_PATCH = 'fh-skip-window-lookup';

/** Temporal's limit for one payload is 2 MB; stay clear of it (external storage offloads large ones). */
const MAX_SCHEDULED_PAYLOAD_BYTES = 1_900_000;

export interface TemporalPortOptions {
  /** Called for every event, in workflow state order (for queries). */
  record(event: AgentEvent): void;
}

const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: 10 } as const;
const modelOptions: ActivityOptions = { startToCloseTimeout: '10 minutes', retry };
const toolOptions: ActivityOptions = { startToCloseTimeout: '30 minutes', heartbeatTimeout: '15s', retry };

function activities(options: ActivityOptions, summary: string) {
  return proxyActivities<FabricActivities>({ ...options, summary });
}

const local = proxyLocalActivities<Pick<FabricActivities, 'fhDecideCompaction'>>({
  startToCloseTimeout: '30s',
  summary: 'compaction decision',
});

interface SessionTransport {
  version: number;
  base: TranscriptRefPayload | null;
}

/** The delta with tool results the tool activity stored replaced by their references. */
function withToolResultRefs(delta: Entry[], refs: ReadonlyMap<string, string>): Entry[] {
  return delta.map((entry) =>
    entry.type === 'tool_results' && entry.results.some((r) => refs.has(r.tool_use_id))
      ? {
          ...entry,
          results: entry.results.map((r) => {
            const contentRef = refs.get(r.tool_use_id);
            return contentRef ? { ...r, content: '', contentRef } : r;
          }),
        }
      : entry,
  );
}

/**
 * Ports for workflow code: every model call, summary and tool call is an activity; the compaction
 * decision is a local activity, so it is recorded in history before it is acted on.
 */
export function createTemporalPorts(opts: TemporalPortOptions): RuntimePorts {
  const sinks = proxySinks<FabricSinks>();
  const transports = new Map<string, SessionTransport>();
  const sentPreludes = new Set<string>();
  const resolved = new Map<string, { model: string; contextWindowTokens?: number }>();
  /** tool_use id → where its tool activity stored the result. */
  const toolResultRefs = new Map<string, string>();

  return {
    runtime: 'temporal',
    async callModel(req) {
      let t = transports.get(req.sessionId);
      if (!t || t.version !== req.historyVersion) {
        t = { version: req.historyVersion, base: null };
        transports.set(req.sessionId, t);
      }
      const prelude = { system: req.system, tools: req.tools };
      const preludeHash = hashString(canonicalJson(prelude));
      const base = t.base && t.base.count <= req.entries.length ? t.base : null;
      // After a store miss nothing goes by reference: not the transcript, the prelude or tool results.
      const build = (byReference: boolean): ModelActivityInput => {
        const from = byReference ? base : null;
        const delta = req.entries.slice(from?.count ?? 0);
        return {
          model: req.model,
          maxTokens: req.maxTokens,
          prelude: byReference && sentPreludes.has(preludeHash) ? { hash: preludeHash } : { hash: preludeHash, value: prelude },
          base: from,
          delta: byReference ? withToolResultRefs(delta, toolResultRefs) : delta,
        };
      };
      const call = (input: ModelActivityInput) => {
        assertFits('model call input', input);
        return activities(modelOptions, `model ${req.model}`).fhModel(input);
      };
      let result;
      try {
        result = await call(build(true));
      } catch (err) {
        // A worker without this transcript (another machine, a cleared store): send it whole, once.
        if (failureType(err) !== TRANSCRIPT_STORE_MISS) throw toModelError(err);
        try {
          result = await call(build(false));
        } catch (err2) {
          throw toModelError(err2);
        }
      }
      sentPreludes.add(preludeHash);
      t.base = result.stored;
      return { entry: result.entry, usage: result.usage, stopReason: result.stopReason, model: result.model };
    },

    async summarize(req) {
      try {
        return await activities(modelOptions, `summarize with ${req.model}`).fhSummarize({
          model: req.model,
          system: req.system,
          userText: req.userText,
          maxTokens: req.maxTokens,
        });
      } catch (err) {
        throw toModelError(err);
      }
    },

    async runTool(call, def) {
      const input = { name: call.name, callId: call.id, input: call.input, cwd: call.cwd };
      assertFits(`tool ${call.name} input`, input);
      const options = def.timeoutMs ? { ...toolOptions, startToCloseTimeout: def.timeoutMs } : toolOptions;
      const result = await activities(options, `tool ${call.name}`).fhTool(input);
      if (result.contentRef) toolResultRefs.set(call.id, result.contentRef);
      return { content: result.content, isError: result.isError };
    },

    decideCompaction: (facts) => local.fhDecideCompaction(facts),

    async resolveModel(model, options = {}) {
      const given = options.contextWindowTokens;
      const key = `${model ?? ''}|${given ?? ''}`;
      let hit = resolved.get(key);
      if (!hit) {
        // Histories recorded before runs passed the agent's window (and the activity looked it up
        // anyway) replay with the input they recorded.
        const input = given !== undefined && patched(SKIP_WINDOW_LOOKUP_PATCH) ? { model, contextWindowTokens: given } : { model };
        hit = await activities(modelOptions, `resolve model ${model ?? '(worker default)'}`).fhResolveModel(input);
        resolved.set(key, hit);
      }
      return hit;
    },

    // The workflow sandbox's Date is workflow time: deterministic, identical on replay.
    now: () => Date.now(),

    emit(event) {
      opts.record(event);
      sinks.fabric.event(event);
    },
  };
}

function failureType(err: unknown): string | undefined {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) return err.cause.type ?? undefined;
  return undefined;
}

/** Maps a failed model activity back to the ModelCallError the session logic reasons about. */
function toModelError(err: unknown): unknown {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
    const details = err.cause.details?.[0] as { kind?: ModelErrorKind; status?: number | null } | undefined;
    if (details?.kind) return new ModelCallError(details.kind, err.cause.message, details.status ?? undefined);
  }
  return err;
}

function assertFits(what: string, value: unknown): void {
  const bytes = jsonBytes(value);
  if (bytes > MAX_SCHEDULED_PAYLOAD_BYTES) throw new PayloadTooLargeError(what, bytes, MAX_SCHEDULED_PAYLOAD_BYTES);
}

/** UTF-8 length of the JSON, without TextEncoder (not every sandbox version has it). */
function jsonBytes(value: unknown): number {
  const s = JSON.stringify(value) ?? '';
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? (i++, 4) : 3;
  }
  return bytes;
}
