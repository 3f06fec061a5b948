/**
 * Context management as the fake Anthropic server reproduces it (beta `context-management-2025-06-27`;
 * compaction beta `compact-2026-01-12`): the `context_management` parameter's rules, and the clearing
 * edits (`clear_tool_uses_20250919`, `clear_thinking_20251015`) applied server-side.
 *
 * Shapes from the SDK's types (@anthropic-ai/sdk 1.12), behaviour from the docs page build-with-
 * claude/context-editing, error wording from real 400s quoted in public issues (cited per message);
 * "guessed" or "wording is ours" where we had neither.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { COMPACTION_BETA, CONTEXT_MANAGEMENT_BETA } from './fake-anthropic-betas';
import { isObj } from './fake-anthropic-blocks';
import { thinkingOn } from './fake-anthropic-thinking';

export type ContextEditType = 'clear_tool_uses_20250919' | 'clear_thinking_20251015' | 'compact_20260112';
const EDIT_TYPES: ContextEditType[] = ['clear_tool_uses_20250919', 'clear_thinking_20251015', 'compact_20260112'];
/** Fields each edit may carry (BetaClearToolUses20250919Edit, BetaClearThinking20251015Edit, BetaCompact20260112Edit). */
const EDIT_FIELDS: Record<ContextEditType, string[]> = {
  clear_tool_uses_20250919: ['type', 'trigger', 'keep', 'clear_at_least', 'exclude_tools', 'clear_tool_inputs'],
  clear_thinking_20251015: ['type', 'keep'],
  compact_20260112: ['type', 'trigger', 'instructions', 'pause_after_compaction'],
};
/** Defaults from the context-editing docs (trigger 100,000 input tokens, keep 3 tool uses). */
export const CLEAR_TOOL_USES_DEFAULTS = { triggerInputTokens: 100_000, keepToolUses: 3 };
/** Default from the SDK's BetaCompact20260112Edit.trigger doc: "Defaults to 150000 input tokens". */
export const COMPACT_DEFAULT_TRIGGER = 150_000;
/** The context-editing docs do not print the placeholder the API writes; ours (guessed). */
export const CLEARED_TOOL_RESULT = '[tool result cleared by context management]';

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function checkThreshold(v: unknown, at: string, types: string[]): string | undefined {
  if (!isObj(v)) return `${at}: Input should be a valid dictionary`;
  if (!types.includes(v.type)) {
    return `${at}: Input tag '${String(v.type)}' found using 'type' does not match any of the expected tags: ${types.map((t) => `'${t}'`).join(', ')}`;
  }
  if (v.type !== 'all') {
    if (v.value === undefined) return `${at}.${v.type}.value: Field required`;
    if (!isCount(v.value)) return `${at}.${v.type}.value: Input should be a valid integer`;
  }
  return undefined;
}

/**
 * The `context_management` parameter. Without the beta header the API treats it as an unknown field
 * (pydantic's "Extra inputs are not permitted"; guessed: we have no verbatim sample). Shapes follow the
 * SDK's Beta*Edit types; errors use the API's pydantic wording for unions and fields. Rules from the docs
 * whose wording is ours: `compact_20260112` needs the `compact-2026-01-12` beta; `clear_thinking_20251015`
 * needs thinking enabled and must come first when combined with `clear_tool_uses_20250919`; each type
 * at most once; the compaction trigger is at least 50,000 tokens (guessed from the docs we recall).
 */
export function checkContextManagement(body: Record<string, any>, betas: string[]): string | undefined {
  const cm = body.context_management;
  if (cm === undefined || cm === null) return undefined;
  if (!betas.includes(CONTEXT_MANAGEMENT_BETA) && !betas.includes(COMPACTION_BETA)) return 'context_management: Extra inputs are not permitted';
  if (!isObj(cm)) return 'context_management: Input should be a valid dictionary';
  const extra = Object.keys(cm).find((k) => k !== 'edits');
  if (extra) return `context_management.${extra}: Extra inputs are not permitted`;
  if (cm.edits === undefined || cm.edits === null) return undefined;
  if (!Array.isArray(cm.edits)) return 'context_management.edits: Input should be a valid list';
  const seen: string[] = [];
  for (let i = 0; i < cm.edits.length; i++) {
    const e = cm.edits[i];
    const at = `context_management.edits.${i}`;
    if (!isObj(e)) return `${at}: Input should be a valid dictionary`;
    if (!EDIT_TYPES.includes(e.type)) {
      return `${at}: Input tag '${String(e.type)}' found using 'type' does not match any of the expected tags: ${EDIT_TYPES.map((t) => `'${t}'`).join(', ')}`;
    }
    const type = e.type as ContextEditType;
    const field = Object.keys(e).find((k) => !EDIT_FIELDS[type].includes(k));
    if (field) return `${at}.${type}.${field}: Extra inputs are not permitted`;
    if (seen.includes(type)) return `${at}: duplicate context management edit type '${type}'`; // wording is ours
    seen.push(type);
    const inner = `${at}.${type}`;
    if (type === 'clear_tool_uses_20250919') {
      if (!betas.includes(CONTEXT_MANAGEMENT_BETA)) return `${at}: '${type}' requires the '${CONTEXT_MANAGEMENT_BETA}' beta`; // wording is ours
      let bad: string | undefined;
      if (e.trigger !== undefined) bad = checkThreshold(e.trigger, `${inner}.trigger`, ['input_tokens', 'tool_uses']);
      if (!bad && e.keep !== undefined) bad = checkThreshold(e.keep, `${inner}.keep`, ['tool_uses']);
      if (!bad && e.clear_at_least !== undefined && e.clear_at_least !== null) bad = checkThreshold(e.clear_at_least, `${inner}.clear_at_least`, ['input_tokens']);
      if (bad) return bad;
      if (e.exclude_tools !== undefined && e.exclude_tools !== null && (!Array.isArray(e.exclude_tools) || e.exclude_tools.some((x: unknown) => typeof x !== 'string'))) {
        return `${inner}.exclude_tools: Input should be a valid list`;
      }
      const cti = e.clear_tool_inputs;
      if (cti !== undefined && cti !== null && typeof cti !== 'boolean' && !(Array.isArray(cti) && cti.every((x: unknown) => typeof x === 'string'))) {
        return `${inner}.clear_tool_inputs: Input should be a valid boolean`;
      }
    }
    if (type === 'clear_thinking_20251015') {
      if (!betas.includes(CONTEXT_MANAGEMENT_BETA)) return `${at}: '${type}' requires the '${CONTEXT_MANAGEMENT_BETA}' beta`; // wording is ours
      if (e.keep !== undefined && e.keep !== 'all') {
        const bad = checkThreshold(e.keep, `${inner}.keep`, ['thinking_turns', 'all']);
        if (bad) return bad;
        if (e.keep.type === 'thinking_turns' && e.keep.value < 1) return `${inner}.keep.thinking_turns.value: Input should be greater than or equal to 1`;
      }
      if (!thinkingOn(body)) return `${at}: '${type}' requires thinking to be enabled`; // wording is ours
      if (seen.includes('clear_tool_uses_20250919')) return `${at}: '${type}' must come before 'clear_tool_uses_20250919' in \`edits\``; // wording is ours
    }
    if (type === 'compact_20260112') {
      if (!betas.includes(COMPACTION_BETA)) return `${at}: '${type}' requires the '${COMPACTION_BETA}' beta`; // wording is ours
      if (e.trigger !== undefined && e.trigger !== null) {
        const bad = checkThreshold(e.trigger, `${inner}.trigger`, ['input_tokens']);
        if (bad) return bad;
        if (e.trigger.value < 50_000) return `${inner}.trigger.input_tokens.value: Input should be greater than or equal to 50000`; // guessed minimum
      }
      if (e.instructions !== undefined && e.instructions !== null && typeof e.instructions !== 'string') return `${inner}.instructions: Input should be a valid string`;
      if (e.pause_after_compaction !== undefined && typeof e.pause_after_compaction !== 'boolean') return `${inner}.pause_after_compaction: Input should be a valid boolean`;
    }
  }
  return undefined;
}

export type AppliedEdit = Anthropic.Beta.BetaClearToolUses20250919EditResponse | Anthropic.Beta.BetaClearThinking20251015EditResponse;

/**
 * Applies the clearing edits to a (deep-copied) body, in the order given, as the context-editing docs
 * describe them, and returns the edited body and what was applied (`applied_edits`, only edits that
 * changed something). The client's own history is never changed (docs: edits apply server-side only).
 * - `clear_tool_uses_20250919`: when input tokens exceed `trigger` (or tool uses exceed a `tool_uses`
 *   trigger), the oldest tool results beyond the `keep` most recent tool uses are replaced by a
 *   placeholder (ours), skipping `exclude_tools`; `clear_tool_inputs` also empties the calls' inputs
 *   (to `{}`: guessed); nothing is cleared unless at least `clear_at_least` tokens would be.
 * - `clear_thinking_20251015`: thinking blocks are removed from all but the last `keep` assistant turns
 *   (default 1; `'all'` keeps all). Without this edit, with thinking on, the API itself keeps only the
 *   last assistant turn's thinking (docs), which {@link stripOldThinking} applies without reporting it.
 */
export function applyContextEdits(body: Record<string, any>, count: (b: Record<string, any>) => number): { body: Record<string, any>; applied: AppliedEdit[] } {
  let current = body;
  const applied: AppliedEdit[] = [];
  const edits: any[] = Array.isArray(body.context_management?.edits) ? body.context_management.edits : [];
  for (const e of edits) {
    if (e.type === 'clear_tool_uses_20250919') {
      const r = clearToolUses(current, e, count);
      if (r) {
        current = r.body;
        applied.push({ type: 'clear_tool_uses_20250919', cleared_tool_uses: r.cleared, cleared_input_tokens: r.tokens });
      }
    } else if (e.type === 'clear_thinking_20251015') {
      const keep = e.keep === undefined ? 1 : e.keep === 'all' || e.keep.type === 'all' ? Infinity : e.keep.value;
      const before = count(current);
      const r = keepThinkingTurns(current, keep);
      if (r.cleared > 0) {
        current = r.body;
        applied.push({ type: 'clear_thinking_20251015', cleared_thinking_turns: r.cleared, cleared_input_tokens: before - count(current) });
      }
    }
  }
  if (thinkingOn(body) && !edits.some((e) => e.type === 'clear_thinking_20251015')) current = keepThinkingTurns(current, 1).body;
  return { body: current, applied };
}

/** With thinking on and no clear_thinking edit, only the last assistant turn's thinking is in context. */
export function stripOldThinking(body: Record<string, any>): Record<string, any> {
  return thinkingOn(body) ? keepThinkingTurns(body, 1).body : body;
}

function keepThinkingTurns(body: Record<string, any>, keep: number): { body: Record<string, any>; cleared: number } {
  const msgs = body.messages as any[];
  const assistantIdx = msgs.map((m, i) => (m.role === 'assistant' ? i : -1)).filter((i) => i >= 0);
  const keepFrom = keep === Infinity ? Infinity : assistantIdx.length - keep;
  let cleared = 0;
  const out = msgs.map((m, i) => {
    const rank = assistantIdx.indexOf(i);
    if (rank < 0 || rank >= keepFrom || !Array.isArray(m.content)) return m;
    const kept = m.content.filter((b: any) => b?.type !== 'thinking' && b?.type !== 'redacted_thinking');
    if (kept.length === m.content.length) return m;
    cleared++;
    return { ...m, content: kept };
  });
  return { body: cleared > 0 ? { ...body, messages: out } : body, cleared };
}

function clearToolUses(body: Record<string, any>, e: any, count: (b: Record<string, any>) => number): { body: Record<string, any>; cleared: number; tokens: number } | undefined {
  const msgs = body.messages as any[];
  const uses: Array<{ i: number; j: number; id: string; name: string }> = [];
  msgs.forEach((m, i) => {
    if (m.role === 'assistant' && Array.isArray(m.content)) {
      m.content.forEach((b: any, j: number) => b?.type === 'tool_use' && uses.push({ i, j, id: b.id, name: b.name }));
    }
  });
  const trigger = e.trigger ?? { type: 'input_tokens', value: CLEAR_TOOL_USES_DEFAULTS.triggerInputTokens };
  const before = count(body);
  const fired = trigger.type === 'tool_uses' ? uses.length > trigger.value : before > trigger.value;
  if (!fired) return undefined;
  const keep = e.keep?.value ?? CLEAR_TOOL_USES_DEFAULTS.keepToolUses;
  const exclude = new Set<string>(e.exclude_tools ?? []);
  const candidates = uses.slice(0, Math.max(0, uses.length - keep)).filter((u) => !exclude.has(u.name));
  if (candidates.length === 0) return undefined;
  const ids = new Set(candidates.map((u) => u.id));
  const clearInputs = (name: string) => e.clear_tool_inputs === true || (Array.isArray(e.clear_tool_inputs) && e.clear_tool_inputs.includes(name));
  const out = msgs.map((m) => {
    if (!Array.isArray(m.content)) return m;
    return {
      ...m,
      content: m.content.map((b: any) => {
        if (b?.type === 'tool_result' && ids.has(b.tool_use_id)) return { type: 'tool_result', tool_use_id: b.tool_use_id, content: CLEARED_TOOL_RESULT };
        if (b?.type === 'tool_use' && ids.has(b.id) && clearInputs(b.name)) return { ...b, input: {} };
        return b;
      }),
    };
  });
  const edited = { ...body, messages: out };
  const tokens = before - count(edited);
  if (e.clear_at_least && tokens < e.clear_at_least.value) return undefined;
  return { body: edited, cleared: candidates.length, tokens };
}
