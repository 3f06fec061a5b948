/**
 * The top-level fields the Messages API takes, per endpoint: the real API refuses any other with a 400
 * `invalid_request_error` "<field>: Extra inputs are not permitted", so a misspelt parameter fails here
 * as it would in production rather than passing every test.
 *
 * The lists are the body params of `@anthropic-ai/sdk` 1.12's `MessageCreateParams` and
 * `MessageCountTokensParams` (API version 2026-10-21, which the SDK sends): the SDK is generated from
 * the API's own spec. Its header params (`betas`, `user_profile_id`, `workspace_id`) never reach the
 * body. That API version has no `temperature`, `top_k` or `top_p`. A request with an `anthropic-beta`
 * header is checked against the beta surface (`client.beta.messages.*`), which adds the beta-only
 * fields; whether a beta field needs a particular beta is each field's own check (e.g. context_management).
 */

/** POST /v1/messages, without a beta. */
export const MESSAGES_FIELDS: readonly string[] = [
  'max_tokens',
  'messages',
  'model',
  'cache_control',
  'container',
  'diagnostics',
  'inference_geo',
  'metadata',
  'output_config',
  'service_tier',
  'speed',
  'stop_sequences',
  'stream',
  'system',
  'thinking',
  'tool_choice',
  'tools',
];

/** POST /v1/messages/count_tokens, without a beta: no max_tokens, stream, metadata, stop_sequences, service_tier. */
export const COUNT_TOKENS_FIELDS: readonly string[] = ['messages', 'model', 'cache_control', 'output_config', 'speed', 'system', 'thinking', 'tool_choice', 'tools'];

/** What the beta surface adds to each (BetaMessageCreateParams, BetaMessageCountTokensParams). */
const BETA_MESSAGES_EXTRA = ['billing_policy', 'compaction', 'context_management', 'fallback_credit_token', 'fallbacks', 'mcp_servers', 'output_format', 'thread'];
const BETA_COUNT_TOKENS_EXTRA = ['billing_policy', 'compaction', 'context_management', 'mcp_servers', 'output_format'];

/** The fields an endpoint takes: `generation` is /v1/messages (false: count_tokens); `beta` when the request named a beta. */
export function knownTopLevelFields(generation: boolean, beta: boolean): readonly string[] {
  const base = generation ? MESSAGES_FIELDS : COUNT_TOKENS_FIELDS;
  if (!beta) return base;
  return [...base, ...(generation ? BETA_MESSAGES_EXTRA : BETA_COUNT_TOKENS_EXTRA)];
}

/** The real API's message for the first top-level field the endpoint does not know, or undefined. */
export function checkTopLevelFields(body: Record<string, unknown>, generation: boolean, beta: boolean): string | undefined {
  const known = knownTopLevelFields(generation, beta);
  const extra = Object.keys(body).find((k) => !known.includes(k));
  return extra === undefined ? undefined : `${extra}: Extra inputs are not permitted`;
}
