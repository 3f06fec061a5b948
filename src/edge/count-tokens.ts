/**
 * The 'count-tokens' estimator: the threshold decision made from the provider's exact input-token
 * count of the request about to be sent (POST /v1/messages/count_tokens) instead of the heuristic.
 * Runs where the model is called (the model activity, or inline), so workflow code is unchanged and
 * the recorded decision carries the count for replays.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { decideFromFacts, type CompactionDecision, type DecisionFacts } from '../core/context/compaction/decide';
import { canonicalJson, hashString } from '../core/hash';
import { messagesParams, type MessagesCall } from './anthropic';
import { Lru } from '../core/lru';

/** The count_tokens body for the request `call` describes: the same params, minus max_tokens. */
export function countTokensParams(call: MessagesCall): Anthropic.MessageCountTokensParams {
  const { max_tokens: _maxTokens, ...rest } = messagesParams(call);
  return rest as Anthropic.MessageCountTokensParams;
}

export const COUNT_CACHE_SIZE = 64;

/**
 * Exact counts per worker (or inline process), keyed by a hash of the exact request: a retried
 * activity or a replayed decision asks the provider once. A small LRU (Map keeps insertion order).
 */
export class TokenCountCache {
  private readonly counts: Lru<string, number>;
  constructor(size = COUNT_CACHE_SIZE) {
    this.counts = new Lru(size, 'tokenCounts cache size');
  }

  /**
   * The exact count of `call`'s request. With context management it goes to the beta surface with the
   * call's betas: `context_management` exists only there, and without them the API refuses it
   * ("context_management: Extra inputs are not permitted"), which left every such count to the heuristic.
   */
  async count(client: Anthropic, call: MessagesCall, signal?: AbortSignal): Promise<number> {
    const params = countTokensParams(call);
    const betas = call.contextManagement?.betas ?? [];
    const key = hashString(canonicalJson(betas.length ? { params, betas } : params));
    const hit = this.counts.get(key);
    if (hit !== undefined) return hit;
    const res = betas.length
      ? await client.beta.messages.countTokens({ ...(params as Anthropic.Beta.MessageCountTokensParams), betas: [...betas] }, { signal })
      : await client.messages.countTokens(params, { signal });
    this.counts.set(key, res.input_tokens);
    return res.input_tokens;
  }
}

/** True when these facts ask for the exact count before deciding. */
export function wantsExactCount(facts: DecisionFacts | undefined): facts is DecisionFacts {
  return facts?.settings.estimator === 'count-tokens' && facts.trigger === 'threshold';
}

/**
 * Decides from the exact count (the facts' other fields unchanged). A failed count (network, 4xx,
 * 5xx) never fails the call: the heuristic estimate decides, and the decision says so.
 */
export async function decideWithExactCount(
  facts: DecisionFacts,
  count: () => Promise<number>,
): Promise<CompactionDecision> {
  let counted: number;
  try {
    counted = await count();
  } catch {
    return { ...decideFromFacts(facts), estimator: 'heuristic-fallback' };
  }
  return { ...decideFromFacts({ ...facts, estimatedTokens: counted }), countedTokens: counted, estimator: 'count-tokens' };
}
