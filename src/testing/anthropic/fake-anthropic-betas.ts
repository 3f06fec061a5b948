/**
 * Beta headers the fake Anthropic server understands (the names the SDK's `AnthropicBeta` type lists;
 * `client.beta.messages.create({ betas })` sends them comma-joined in `anthropic-beta`).
 */

export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';
export const COMPACTION_BETA = 'compact-2026-01-12';

/** The beta names of a request's `anthropic-beta` header (comma-separated; repeated headers joined). */
export function betasOf(headers: Record<string, string>): string[] {
  return (headers['anthropic-beta'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
