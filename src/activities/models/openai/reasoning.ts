/**
 * Thinking on OpenAI: our budget (a level's tokens, see core/sessions/settings) as a reasoning effort,
 * and the Responses API's encrypted reasoning kept as a redacted_thinking block, whose opaque `data`
 * carries the item back on the next call (the conversation is ours: nothing is stored server-side).
 */

export type ReasoningEffort = 'low' | 'medium' | 'high';

/** low ≤ 2048 (level low), medium ≤ 8192 (level medium), high above (levels high and max). */
export function effortFor(budgetTokens: number): ReasoningEffort {
  if (budgetTokens <= 2048) return 'low';
  if (budgetTokens <= 8192) return 'medium';
  return 'high';
}

const PREFIX = 'openai-reasoning:';

/** A Responses reasoning item (its id and encrypted content) as a redacted_thinking block's data. */
export function sealReasoning(item: { id: string; encrypted_content: string }): string {
  return PREFIX + JSON.stringify({ id: item.id, encrypted_content: item.encrypted_content });
}

/** The reasoning item a redacted_thinking block carries (undefined: not one of ours, e.g. Anthropic's). */
export function openReasoning(data: string): { id: string; encrypted_content: string } | undefined {
  if (!data.startsWith(PREFIX)) return undefined;
  try {
    const item = JSON.parse(data.slice(PREFIX.length)) as { id?: unknown; encrypted_content?: unknown };
    return typeof item.id === 'string' && typeof item.encrypted_content === 'string' ? { id: item.id, encrypted_content: item.encrypted_content } : undefined;
  } catch {
    return undefined;
  }
}
