/**
 * Per-session settings: model (changes freely), connection (locked after the first message), thinking
 * level, permission mode and working directory. A patch is validated by one strict zod schema; a bad
 * field throws INVALID_INPUT naming it (`settings.permissionMode`).
 */
import { z } from 'zod';
import { costBudgetSchema, type CostBudget } from '../costs';
import { InvalidInputError } from '../errors';
import { ConnectionLockedError } from './errors';
import { connectionNameSchema } from '../connection-name';
import { lazySchema } from '../lazy-schema';

export const PERMISSION_MODES = ['explore', 'ask', 'execute'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
export const THINKING_LEVELS = ['off', 'low', 'medium', 'high', 'max'] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

export interface SessionSettings {
  model?: string;
  connection: string;
  thinking: ThinkingLevel;
  permissionMode: PermissionMode;
  workingDirectory?: string;
  /** The session's spending limit (absent: the agent's init({ budget }), if any). */
  budget?: CostBudget;
}

export const sessionSettingsPatchSchema = lazySchema(() => z
  .object({
    model: z.string().min(1).max(200).optional(),
    connection: connectionNameSchema.optional(),
    thinking: z.enum(THINKING_LEVELS).optional(),
    permissionMode: z.enum(PERMISSION_MODES).optional(),
    workingDirectory: z
      .string()
      .min(1)
      .refine((dir) => !dir.includes('\0'), 'must not contain NUL characters')
      .optional(),
    /** null removes the session's budget (the agent's init({ budget }) applies again). */
    budget: costBudgetSchema.nullable().optional(),
  })
  .strict());

export type SessionSettingsPatch = z.infer<typeof sessionSettingsPatchSchema>;

export const DEFAULT_SESSION_SETTINGS: Readonly<SessionSettings> = Object.freeze({
  connection: 'anthropic',
  thinking: 'off',
  permissionMode: 'execute',
});

function parsePatch(patch: unknown): SessionSettingsPatch {
  const result = sessionSettingsPatchSchema.safeParse(patch);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    // An unknown key is named itself (settings.colour), not the object holding it.
    const key = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
    const path = ['settings', ...issue.path.map(String), ...(key !== undefined ? [key] : [])].join('.');
    return { path, message: issue.code === 'unrecognized_keys' ? 'is not a session setting' : issue.message };
  });
  throw new InvalidInputError('session settings', issues[0]!.path, issues);
}

/** Settings with only the fields that have values (so absent stays absent, in JSON and comparisons). */
function merge(base: SessionSettings, patch: SessionSettingsPatch): SessionSettings {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) merged[key] = value;
  if (merged.budget === null) delete merged.budget;
  return merged as unknown as SessionSettings;
}

/** The settings of a new session: the defaults (connection anthropic, thinking off, execute) under `partial`. */
export function defaultSessionSettings(partial?: SessionSettingsPatch): SessionSettings {
  const base: SessionSettings = { ...DEFAULT_SESSION_SETTINGS };
  return partial === undefined ? base : merge(base, parsePatch(partial));
}

/**
 * The settings after a patch from a user or client. Validates every field; once the session has had
 * its first message (`started`), a different connection throws CONNECTION_LOCKED (the same one is fine).
 */
export function applySettingsPatch(current: SessionSettings, patch: unknown, opts: { started: boolean }): SessionSettings {
  const parsed = parsePatch(patch);
  if (opts.started && parsed.connection !== undefined && parsed.connection !== current.connection) {
    throw new ConnectionLockedError(current.connection, parsed.connection);
  }
  return merge(current, parsed);
}

const THINKING_BUDGETS: Record<ThinkingLevel, number | undefined> = {
  off: undefined,
  low: 2048,
  medium: 8192,
  high: 16384,
  max: 32000,
};

/** Extended-thinking budget for a level (undefined: thinking off). */
export function thinkingBudgetTokens(level: ThinkingLevel): number | undefined {
  return THINKING_BUDGETS[level];
}
