import type { EnhanceOptions, EnhanceResult } from '../edge/enhance/enhance';

export type { EnhanceOptions, EnhanceResult };

/**
 * The prompt enhancer in this process (see edge/enhance/enhance.ts); loaded on first call, so
 * the client entry does not load the Anthropic client for it. Workers also offer it as the activity
 * `fhEnhancePrompt`.
 */
export function enhancePrompt(draft: string, options: EnhanceOptions): Promise<EnhanceResult> {
  return (require('../edge/enhance/enhance') as typeof import('../edge/enhance/enhance')).enhancePrompt(draft, options);
}
