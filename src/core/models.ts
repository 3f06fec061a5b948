/**
 * Model defaults. The context window normally comes from the Models API (`max_input_tokens`); this
 * table is the fallback when that lookup cannot answer (offline, or a provider without the endpoint).
 */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';

const BUILTIN_WINDOWS: Array<[RegExp, number]> = [
  // Every current Claude model accepts at least 200k input tokens; larger tiers are opt-in betas.
  [/^claude-/, 200_000],
  // OpenAI (its models API gives no window). gpt-5.x: 400k in all, of which up to 128k output, so 272k in.
  [/^gpt-5(\.\d+)?-chat/, 128_000],
  [/^gpt-5/, 272_000],
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-4o/, 128_000],
  [/^o\d/, 200_000],
];

export function builtinContextWindow(model: string): number | undefined {
  for (const [pattern, tokens] of BUILTIN_WINDOWS) if (pattern.test(model)) return tokens;
  return undefined;
}
