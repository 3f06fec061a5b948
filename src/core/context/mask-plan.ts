/**
 * When masking goes ahead. Each masking rewrites history from the first result it
 * touches, so the provider's prompt cache is rebuilt from there: masking one result per call would
 * throw the cache away on every call. The boundary advances only once a large enough chunk of stale
 * results has built up. Pure and deterministic (workflow code); results already masked are placeholders
 * and count for nothing, so no state is needed across calls, compactions or rollbacks.
 */
import type { Entry } from '../entries';
import { preservePredicate } from './evidence';
import { maskStaleToolResults } from './mask';
import type { ToolResultSettings } from './tool-result-settings';

/** Mask once at least this many stale results would become placeholders… */
export const MASK_MIN_RESULTS = 5;
/** …or the placeholders would save at least this many estimated tokens. */
export const MASK_MIN_TOKENS = 2_000;

export interface MaskPlan {
  before: number;
  /** The results to mask (tool_use_ids): recorded, so the evidence rules of a replay do not matter. */
  ids: string[];
  masked: number;
  savedTokens: number;
}

/**
 * The boundary to mask before now, or undefined: masking is not configured (neither maskAfterEntries
 * nor maskAfterTokens), or too little has gone stale to be worth a cache rebuild.
 */
export function planMask(entries: readonly Entry[], settings: ToolResultSettings | undefined): MaskPlan | undefined {
  if (settings?.maskAfterEntries === undefined && settings?.maskAfterTokens === undefined) return undefined;
  const keepRecent = { entries: settings.maskAfterEntries, tokens: settings.maskAfterTokens };
  const { before, masked, ids, savedTokens } = maskStaleToolResults(entries, { keepRecent, preserve: preservePredicate(settings.preserve) });
  if (masked === 0) return undefined;
  if (masked < MASK_MIN_RESULTS && savedTokens < MASK_MIN_TOKENS) return undefined;
  return { before, ids, masked, savedTokens };
}
