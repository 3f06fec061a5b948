/**
 * The run's context: a flat key -> JSON value map that every stage's outcome merges into. Which keys
 * each handler writes, which the engine owns, and the large-value rule (over 100 KB serialized: stored,
 * the context keeps a reference) are here; storing is the runtime's.
 */
import { InvalidInputError } from '../errors';
import { ReservedContextKeyError } from './errors';

export type ContextValue = string | number | boolean | null | ContextValue[] | { [k: string]: ContextValue };
export type FlowContext = Record<string, ContextValue>;

/** The seed's threshold: a value whose serialized JSON is over this many bytes is offloaded. */
export const OFFLOAD_VALUE_BYTES = 100_000;
/** last_response keeps the first this many characters of the reply. */
export const LAST_RESPONSE_CHARS = 200;
/** How an offloaded value reads in the context: `artifact://<ref>#<bytes>`. */
export const ARTIFACT_SCHEME = 'artifact://';

/** Keys only the engine writes: given by a user (`--set`) or an agent's context_updates, they are refused. */
const RESERVED_EXACT = new Set(['outcome', 'failure_class', 'failure_signature', 'preferred_label', 'current_node', 'last_stage']);
const RESERVED_PREFIXES = ['internal.', 'graph.'];

export function isReservedKey(key: string): boolean {
  return RESERVED_EXACT.has(key) || RESERVED_PREFIXES.some((p) => key.startsWith(p));
}

/** Checks user-given initial values (`--set`): a reserved key is a typed error naming it. */
export function checkUserContext(values: Record<string, unknown>): void {
  for (const key of Object.keys(values)) if (isReservedKey(key)) throw new ReservedContextKeyError(key);
}

/** `key=value` from the command line; the value is JSON when it parses as JSON (true, 3, "x"), else text. */
export function parseSetting(text: string): [string, ContextValue] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new InvalidInputError('context setting', 'set', [{ path: 'set', message: `'${text}' is not key=value` }]);
  const key = text.slice(0, eq).trim();
  const raw = text.slice(eq + 1);
  try {
    return [key, JSON.parse(raw) as ContextValue];
  } catch {
    return [key, raw];
  }
}

/** A branch's isolated copy: nothing it writes reaches another branch or the parent. */
export function deepCopy(ctx: FlowContext): FlowContext {
  return JSON.parse(JSON.stringify(ctx)) as FlowContext;
}

/** The keys whose value changed from `before` to `after` (what a branch produced). */
export function diffContext(before: FlowContext, after: FlowContext): FlowContext {
  const out: FlowContext = {};
  for (const [k, v] of Object.entries(after)) if (JSON.stringify(before[k]) !== JSON.stringify(v)) out[k] = v;
  return out;
}

export function truncateResponse(text: string): string {
  return text.length <= LAST_RESPONSE_CHARS ? text : text.slice(0, LAST_RESPONSE_CHARS);
}

export function serializedBytes(v: ContextValue): number {
  const s = JSON.stringify(v);
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? (i++, 4) : 3;
  }
  return bytes;
}

/** Keys of an update whose value is over the threshold (these go to the store). */
export function oversizedKeys(updates: FlowContext, limit = OFFLOAD_VALUE_BYTES): string[] {
  return Object.keys(updates).filter((k) => serializedBytes(updates[k]!) > limit);
}

export function artifactPointer(ref: string, bytes: number): string {
  return `${ARTIFACT_SCHEME}${ref}#${bytes}`;
}

export function parseArtifactPointer(v: unknown): { ref: string; bytes: number } | undefined {
  if (typeof v !== 'string' || !v.startsWith(ARTIFACT_SCHEME)) return undefined;
  const m = /^artifact:\/\/([^#\s]+)#(\d+)$/.exec(v);
  return m ? { ref: m[1]!, bytes: Number(m[2]) } : undefined;
}

/**
 * An agent's reply as routing data: a JSON object (the whole reply, or a ```json block in it) may carry
 * `context_updates`, `outcome` and `preferred_label`. Reserved keys in context_updates are dropped
 * (listed in `refused`): the reply is model output, untrusted.
 */
export function parseAgentDirectives(reply: string): { updates: FlowContext; outcome?: 'success' | 'fail'; preferredLabel?: string; refused: string[] } {
  const obj = jsonObjectIn(reply);
  const result: { updates: FlowContext; outcome?: 'success' | 'fail'; preferredLabel?: string; refused: string[] } = { updates: {}, refused: [] };
  if (!obj) return result;
  const cu = obj.context_updates;
  if (cu && typeof cu === 'object' && !Array.isArray(cu)) {
    for (const [k, v] of Object.entries(cu as Record<string, ContextValue>)) {
      if (isReservedKey(k)) result.refused.push(k);
      else result.updates[k] = v;
    }
  }
  if (obj.outcome === 'success' || obj.outcome === 'fail') result.outcome = obj.outcome;
  if (typeof obj.preferred_label === 'string') result.preferredLabel = obj.preferred_label;
  return result;
}

function jsonObjectIn(text: string): Record<string, unknown> | undefined {
  const candidates = [text.trim()];
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n```/.exec(text);
  if (fenced) candidates.push(fenced[1]!.trim());
  for (const c of candidates) {
    if (!c.startsWith('{')) continue;
    try {
      const v = JSON.parse(c) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      /* not JSON: plain prose */
    }
  }
  return undefined;
}
