/**
 * The strict half of an audit replay: the model-call inputs the current code would send, compared
 * with the ones the recorded run sent. A plain replay only proves the code issues the same commands
 * in the same order (Temporal does not compare activity inputs); a changed system prompt, tool
 * definition, model or max_tokens replays "ok". This compares, per fhModel call (matched by activity
 * sequence number): model, max tokens, the prelude (system prompt and tools, by content hash; by
 * value where either side carried it) and the entries sent (the delta).
 */
import type { ModelActivityInput } from '../wire/activity-contract';
import type { ToolSpec } from '../core/tools-spec';
import { toNumber } from './history-fields';
import type { History } from './history-file';
import { isOffloaded, isPlain, PayloadReader, type PayloadSources } from './payloads';

export type ModelInputField = 'system prompt' | 'tools' | 'system prompt or tools' | 'model' | 'max tokens' | 'messages' | 'model call';

/** A model-call input as the workflow code scheduled it (from the replay trace). */
export interface TracedModelInput {
  seq: number;
  input: ModelActivityInput;
}

export interface ModelInputMismatch {
  /** The scheduled event of the recorded model call. */
  eventId: number;
  /** Which model call of the run (1 = the first). */
  call: number;
  field: ModelInputField;
  recorded?: string;
  current?: string;
  explanation: string;
}

interface RecordedModelInput {
  eventId: number;
  seq: number;
  input: ModelActivityInput | undefined;
  /** Why the input could not be read (offloaded without a store, undecodable). */
  unreadable?: string;
}

/** The fhModel inputs history recorded, in order. */
export async function recordedModelInputs(history: History, sources: PayloadSources): Promise<RecordedModelInput[]> {
  const reader = new PayloadReader(sources);
  const out: RecordedModelInput[] = [];
  for (const e of history.events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name !== 'fhModel') continue;
    const value = await reader.value(a.input?.payloads?.[0]);
    const eventId = toNumber(e.eventId) ?? 0;
    const seq = toNumber(a.activityId) ?? -1;
    if (isPlain(value)) out.push({ eventId, seq, input: value as unknown as ModelActivityInput });
    else out.push({ eventId, seq, input: undefined, unreadable: isOffloaded(value) ? 'offloaded to external storage (pass the store)' : 'undecodable' });
  }
  return out;
}

/** The first model call whose input the current code would send differently; undefined when all match. */
export function firstModelInputMismatch(recorded: RecordedModelInput[], traced: TracedModelInput[]): ModelInputMismatch | undefined {
  const recordedPreludes = preludeValues(recorded.map((r) => r.input));
  const currentPreludes = preludeValues(traced.map((t) => t.input));
  const bySeq = new Map(traced.map((t) => [t.seq, t.input]));
  for (const [i, rec] of recorded.entries()) {
    const call = i + 1;
    const cur = bySeq.get(rec.seq);
    const at = (field: ModelInputField, recordedText: string | undefined, currentText: string | undefined, why: string): ModelInputMismatch => ({
      eventId: rec.eventId,
      call,
      field,
      ...(recordedText !== undefined ? { recorded: recordedText } : {}),
      ...(currentText !== undefined ? { current: currentText } : {}),
      explanation: `Model call ${call} (event ${rec.eventId}): ${why}`,
    });
    if (!cur) return at('model call', undefined, undefined, 'the current code does not make this model call at all (a plain replay reports the command difference)');
    if (!rec.input) continue; // cannot compare what cannot be read; said by the caller's skipped count
    const r = rec.input;
    if (r.model !== cur.model) return at('model', r.model, cur.model, `the model differs: recorded ${r.model}, the code now sends ${cur.model}.`);
    if (r.maxTokens !== cur.maxTokens) {
      return at('max tokens', String(r.maxTokens), String(cur.maxTokens), `max_tokens differs: recorded ${r.maxTokens}, the code now sends ${cur.maxTokens}.`);
    }
    if (r.prelude?.hash !== cur.prelude?.hash) {
      const rv = r.prelude?.value ?? recordedPreludes.get(r.prelude?.hash);
      const cv = cur.prelude?.value ?? currentPreludes.get(cur.prelude?.hash);
      if (rv && cv) {
        if ((rv.system ?? '') !== (cv.system ?? '')) {
          return at('system prompt', rv.system, cv.system, `the system prompt differs${firstDifference(rv.system ?? '', cv.system ?? '')}.`);
        }
        return at('tools', toolNames(rv.tools), toolNames(cv.tools), `the tool definitions differ: ${toolDifference(rv.tools, cv.tools)}.`);
      }
      return at(
        'system prompt or tools',
        r.prelude?.hash,
        cur.prelude?.hash,
        `the system prompt or the tool definitions differ (prelude hash recorded ${r.prelude?.hash}, now ${cur.prelude?.hash}).`,
      );
    }
    const rd = JSON.stringify(r.delta ?? []);
    const cd = JSON.stringify(cur.delta ?? []);
    if (rd !== cd) return at('messages', rd, cd, `the messages sent differ${firstDifference(rd, cd)}.`);
  }
  return undefined;
}

/** Preludes by hash, from the calls that carried the value (the first call, and after a store miss). */
function preludeValues(inputs: Array<ModelActivityInput | undefined>): Map<string | undefined, { system?: string; tools: ToolSpec[] }> {
  const m = new Map<string | undefined, { system?: string; tools: ToolSpec[] }>();
  for (const i of inputs) if (i?.prelude?.value) m.set(i.prelude.hash, i.prelude.value);
  return m;
}

function toolNames(tools: ToolSpec[] | undefined): string {
  return (tools ?? []).map((t) => t.name).join(', ');
}

function toolDifference(recorded: ToolSpec[] = [], current: ToolSpec[] = []): string {
  const rn = recorded.map((t) => t.name);
  const cn = current.map((t) => t.name);
  const added = cn.filter((n) => !rn.includes(n));
  const removed = rn.filter((n) => !cn.includes(n));
  if (added.length || removed.length) {
    return [added.length ? `added ${added.join(', ')}` : '', removed.length ? `removed ${removed.join(', ')}` : ''].filter(Boolean).join('; ');
  }
  const changed = recorded.find((t) => JSON.stringify(t) !== JSON.stringify(current.find((c) => c.name === t.name)));
  if (changed) return `tool '${changed.name}' has a different description or input schema`;
  return 'the tools are in a different order';
}

/** ": at character 12, recorded "…abc…", now "…abd…"" */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const cut = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 20), i + 40));
  return ` at character ${i}: recorded ${cut(a)}, now ${cut(b)}`;
}
