/**
 * Compaction hooks (`init({ hooks: { beforeCompact, afterCompact } })`): the agent's say in a compaction,
 * e.g. flushing memory before older history goes and re-injecting it after. They run where the agent's
 * `run` runs (on Temporal: workflow code), so they must be deterministic; what they change is visible
 * in history through the summary request (an activity input) and the events.
 */
import { z } from 'zod';
import type { Entry } from '../../entries';
import type { CompactionReason } from '../../events';
import { lazySchema } from '../../lazy-schema';

export interface BeforeCompactContext {
  reason: CompactionReason;
  /** The history about to be compacted (read-only: return a value to act). */
  entries: readonly Entry[];
  /** The estimated context size now. */
  tokens: number;
  contextWindowTokens?: number;
}

export type BeforeCompactResult = void | undefined | { veto: true; reason?: string } | { instructions: string };

export interface AfterCompactContext {
  reason: CompactionReason;
  /** The summary text the compaction produced. */
  summary: string;
  entriesBefore: number;
  entriesAfter: number;
  /** The history after compaction (its first entry is the summary). */
  entries: readonly Entry[];
}

export type AfterCompactResult = void | undefined | { inject?: string };

export interface CompactionHooks {
  /** Before a compaction is carried out: veto it, or add instructions to the summary request. */
  beforeCompact?: (ctx: BeforeCompactContext) => BeforeCompactResult | Promise<BeforeCompactResult>;
  /** After a compaction: `inject` text is appended to the summary the model sees (e.g. a memory file). */
  afterCompact?: (ctx: AfterCompactContext) => AfterCompactResult | Promise<AfterCompactResult>;
}

const hookFn = () => z.custom<(...args: any[]) => unknown>((v) => typeof v === 'function', { message: 'expected a function' });

export const compactionHooksSchema = lazySchema(() => z.object({ beforeCompact: hookFn().optional(), afterCompact: hookFn().optional() }).strict());

const beforeResultSchema = lazySchema(() => z.union([
  z.undefined(),
  z.object({ veto: z.literal(true), reason: z.string().optional() }).strict(),
  z.object({ instructions: z.string() }).strict(),
]));

const afterResultSchema = lazySchema(() => z.union([z.undefined(), z.object({ inject: z.string().optional() }).strict()]));

/** What a hook said, or why it is ignored (it threw, or returned something else). */
export type HookVerdict<T> = { ok: true; value: T } | { ok: false; message: string };

async function callHook<T>(name: string, schema: z.ZodType<T>, call: () => unknown): Promise<HookVerdict<T>> {
  let returned: unknown;
  try {
    returned = await call();
  } catch (err) {
    return { ok: false, message: `hooks.${name} threw: ${err instanceof Error ? err.message : String(err)}` };
  }
  const parsed = schema.safeParse(returned ?? undefined);
  if (!parsed.success) return { ok: false, message: `hooks.${name} returned an unexpected value: ${JSON.stringify(returned)?.slice(0, 200)}` };
  return { ok: true, value: parsed.data };
}

export function runBeforeCompact(hooks: CompactionHooks | undefined, ctx: BeforeCompactContext): Promise<HookVerdict<z.infer<typeof beforeResultSchema>>> {
  const hook = hooks?.beforeCompact;
  if (!hook) return Promise.resolve({ ok: true, value: undefined });
  return callHook('beforeCompact', beforeResultSchema, () => hook(ctx));
}

export function runAfterCompact(hooks: CompactionHooks | undefined, ctx: AfterCompactContext): Promise<HookVerdict<z.infer<typeof afterResultSchema>>> {
  const hook = hooks?.afterCompact;
  if (!hook) return Promise.resolve({ ok: true, value: undefined });
  return callHook('afterCompact', afterResultSchema, () => hook(ctx));
}
