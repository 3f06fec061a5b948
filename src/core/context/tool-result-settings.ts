/**
 * Settings of tool-result hygiene (`compaction.toolResults`): capping oversized results, masking stale
 * ones, and which results count as verification evidence and are never masked. Plain data (they travel
 * in workflow input and history), so the preserve rule is patterns, not a function; code that calls
 * maskStaleToolResults directly may pass any predicate.
 */
import { z } from 'zod';
import { lazySchema } from '../lazy-schema';

/** Below this a capped result would be mostly marker: refuse it rather than produce noise. */
export const MIN_CAP_TOKENS = 100;

const regexSource = lazySchema(() => z.string().refine((s) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
}, 'is not a valid regular expression'));

export const preserveSettingsSchema = lazySchema(() => z
  .object({
    /** Keep the built-in evidence rules (test runners, build tools, pass/fail summaries). Default true. */
    defaults: z.boolean().optional(),
    /** Tool names whose results are always kept. */
    tools: z.array(z.string().min(1)).optional(),
    /** Regular expressions matched against the call's command (or first string argument). */
    commands: z.array(regexSource).optional(),
    /** Regular expressions matched against the result's content. */
    results: z.array(regexSource).optional(),
  })
  .strict());

export const toolResultSettingsSchema = lazySchema(() => z
  .object({
    /** Cap every tool result at this many estimated tokens (head and tail kept, a marker between). */
    maxTokens: z.number().int().min(MIN_CAP_TOKENS).optional(),
    /** Mask results older than the newest N entries. */
    maskAfterEntries: z.number().int().min(1).optional(),
    /** Mask results older than the newest entries that fit N tokens. */
    maskAfterTokens: z.number().int().positive().optional(),
    preserve: preserveSettingsSchema.optional(),
  })
  .strict());

export type PreserveSettings = z.infer<typeof preserveSettingsSchema>;
export type ToolResultSettings = z.infer<typeof toolResultSettingsSchema>;
