/**
 * Compaction settings: zod schemas are the source of truth for shape; `resolveCompactionSettings`
 * merges session settings, per-prompt overrides and defaults into the numbers the decision uses.
 */
import { z } from 'zod';
import { connectionNameSchema } from '../connection-name';
import { InvalidCompactionSettingsError } from './compaction/errors';
import { toolResultSettingsSchema } from './tool-result-settings';
import { memorySettingsSchema } from './memory-settings';
import { artifactSettingsSchema } from './artifacts';
import { FACT_KINDS } from './compaction/facts';
import { lazySchema } from '../lazy-schema';

/**
 * The compaction gate (compaction/gate.ts): every summary is checked against the facts of what it
 * replaces before it replaces them. On by default in the default entry; in /strict only when enabled.
 */
export const compactionGateSettingsSchema = lazySchema(() => z
  .object({
    enabled: z.boolean().optional(),
    /** The kinds of fact checked (default: all). */
    kinds: z.array(z.enum(FACT_KINDS)).min(1).optional(),
    /** 'restate' (default): missing facts are restated verbatim, no model call. 'reask': the summariser is asked once more, naming them; what it still leaves out is restated. */
    mode: z.enum(['restate', 'reask']).optional(),
  })
  .strict());

export type CompactionGateSettings = z.infer<typeof compactionGateSettingsSchema>;

export const compactionSettingsSchema = lazySchema(() => z
  .object({
    enabled: z.boolean().optional(),
    compactAtTokens: z.number().int().positive().optional(),
    reserveTokens: z.number().int().nonnegative().optional(),
    keepRecentEntries: z.number().int().min(1).optional(),
    /** Keep only the newest entries that fit this many tokens; with keepRecentEntries the smaller window wins. */
    keepRecentTokens: z.number().int().positive().optional(),
    recoverFromOverflow: z.boolean().optional(),
    toolResults: toolResultSettingsSchema.optional(),
    /** Tool outputs over a size threshold are stored and replaced by a reference (read back with read_artifact). */
    artifacts: artifactSettingsSchema.optional(),
    /**
     * How the threshold decision measures the request: 'heuristic' (default, no extra call) or
     * 'count-tokens' (the provider's exact count, one cached count_tokens call before each model call).
     */
    estimator: z.enum(['heuristic', 'count-tokens']).optional(),
    /** The memory flush: off unless enabled, since it costs a model call per compaction. */
    memory: memorySettingsSchema.optional(),
    /**
     * Where context management runs: 'client' (default: our threshold compaction), 'server' (Claude's
     * context editing and compaction, ours only on overflow) or 'auto' (server where the Models API says
     * the model supports it). Decided once per model and recorded (src/core/context/strategy.ts).
     */
    strategy: z.enum(['client', 'server', 'auto']).optional(),
    /**
     * Summaries and memory flushes go to this model connection instead of the session's own (default:
     * the session's), with `summaryModel` (default: the session's model, which must then exist there).
     */
    summaryConnection: connectionNameSchema.optional(),
    summaryModel: z.string().min(1).optional(),
    gate: compactionGateSettingsSchema.optional(),
    /** Text never summarised: shown verbatim in every summary (the project's rules, say). */
    pinned: z.array(z.string().min(1)).optional(),
  })
  .strict());

export type CompactionSettings = z.infer<typeof compactionSettingsSchema>;

/** Per-prompt overrides: `session.prompt(text, { compactAtTokens, … })`. */
export const promptCompactionOverridesSchema = lazySchema(() => z
  .object({
    compactAtTokens: z.number().int().positive().optional(),
    reserveTokens: z.number().int().nonnegative().optional(),
    compactionKeepRecentEntries: z.number().int().min(1).optional(),
    compactionKeepRecentTokens: z.number().int().positive().optional(),
    recoverContextOverflow: z.boolean().optional(),
  })
  .strict());

export type PromptCompactionOverrides = z.infer<typeof promptCompactionOverridesSchema>;

export const COMPACTION_DEFAULTS = { reserveTokens: 4096, keepRecentEntries: 20, recoverFromOverflow: true } as const;

export interface ResolvedCompactionSettings {
  enabled: boolean;
  compactAtTokens: number;
  reserveTokens: number;
  keepRecentEntries: number;
  /** Absent: the keep window is keepRecentEntries alone (and decisions recorded before it existed). */
  keepRecentTokens?: number;
  recoverFromOverflow: boolean;
  contextWindowTokens: number;
  /** Absent: the heuristic estimate (and decisions recorded before the exact count existed). */
  estimator?: 'count-tokens';
}

function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T | undefined {
  if (value === undefined) return undefined;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  // Unknown keys report the key itself; other issues report their path.
  const keys = (issue as { keys?: string[] }).keys;
  // Nested keys (toolResults.…) keep their path, so the field is named in full.
  const path = keys?.[0] !== undefined ? [...issue.path, keys[0]] : issue.path;
  const field = path.length > 0 ? path.map(String).join('.') : what;
  throw new InvalidCompactionSettingsError(field, describeIssue(issue));
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'too_small':
      return `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${String(issue.minimum)}`;
    case 'unrecognized_keys':
      return 'is not a compaction setting';
    default:
      return issue.message;
  }
}

/**
 * The one validator for compaction settings, wherever they are given (init, session, per prompt): a
 * bad value throws InvalidCompactionSettingsError naming the setting.
 */
export function parseCompactionSettings(value: unknown): CompactionSettings | undefined {
  return parseOrThrow(compactionSettingsSchema, value, 'compaction');
}

export function parsePromptCompactionOverrides(value: unknown): PromptCompactionOverrides | undefined {
  return parseOrThrow(promptCompactionOverridesSchema, value, 'prompt options');
}

export function resolveCompactionSettings(
  session: CompactionSettings | undefined,
  overrides: PromptCompactionOverrides | undefined,
  contextWindowTokens: number,
  defaults: { enabled: boolean },
): ResolvedCompactionSettings {
  const s = parseOrThrow(compactionSettingsSchema, session, 'compaction') ?? {};
  const o = parseOrThrow(promptCompactionOverridesSchema, overrides, 'prompt options') ?? {};
  const window = contextWindowTokens;
  if (!Number.isInteger(window) || window <= 0) {
    throw new InvalidCompactionSettingsError('contextWindowTokens', `must be a positive integer, got ${window}`);
  }

  // Per-prompt values win.
  const explicitReserve = o.reserveTokens ?? s.reserveTokens;
  // The default reserve must not make tiny windows (fake models in tests) unusable: shrink it to a
  // quarter of the window only when the default itself would not fit.
  const reserveTokens =
    explicitReserve ?? (COMPACTION_DEFAULTS.reserveTokens < window ? COMPACTION_DEFAULTS.reserveTokens : Math.floor(window / 4));
  if (explicitReserve !== undefined && reserveTokens >= window) {
    throw new InvalidCompactionSettingsError('reserveTokens', `must be below the context window (${window} tokens), got ${reserveTokens}`);
  }

  const compactAtTokens = o.compactAtTokens ?? s.compactAtTokens ?? window - reserveTokens;
  if (compactAtTokens > window) {
    throw new InvalidCompactionSettingsError('compactAtTokens', `must not exceed the context window (${window} tokens), got ${compactAtTokens}`);
  }

  const keepRecentTokens = o.compactionKeepRecentTokens ?? s.keepRecentTokens;
  return {
    enabled: s.enabled ?? defaults.enabled,
    compactAtTokens,
    reserveTokens,
    keepRecentEntries: o.compactionKeepRecentEntries ?? s.keepRecentEntries ?? COMPACTION_DEFAULTS.keepRecentEntries,
    // Only when set: resolved settings travel in recorded decisions, whose shape stays as it was.
    ...(keepRecentTokens !== undefined ? { keepRecentTokens } : {}),
    recoverFromOverflow: o.recoverContextOverflow ?? s.recoverFromOverflow ?? COMPACTION_DEFAULTS.recoverFromOverflow,
    contextWindowTokens: window,
    ...(s.estimator === 'count-tokens' ? { estimator: 'count-tokens' as const } : {}),
  };
}
