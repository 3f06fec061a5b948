import type { EnhanceOptions, EnhanceResult } from '../activities/enhance/enhance';

export type { EnhanceOptions, EnhanceResult };

/**
 * The prompt enhancer in this process (see activities/enhance/enhance.ts); loaded on first call, so
 * the client entry does not load the Anthropic client for it. Workers also offer it as the activity
 * `fhEnhancePrompt`.
 */
export function enhancePrompt(draft: string, options: EnhanceOptions): Promise<EnhanceResult> {
  return (require('../activities/enhance/enhance') as typeof import('../activities/enhance/enhance')).enhancePrompt(draft, options);
}
