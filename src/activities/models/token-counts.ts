/**
 * The 'count-tokens' estimator: the threshold decision made from the provider's exact input-token
 * count of the request about to be sent instead of the heuristic. Runs where the model is called (the
 * model activity, or inline), so workflow code is unchanged and the recorded decision carries the
 * count for replays. A provider without a count endpoint falls back to the heuristic, and the decision
 * says so.
 */
import { decideFromFacts, type CompactionDecision, type DecisionFacts } from '../../core/context/compaction/decide';
import { canonicalJson, hashString } from '../../core/hash';
import { Lru } from '../../core/lru';
import type { MessagesCall, ModelProvider } from './port';

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
   * The exact count of `call`'s request, from its connection's count endpoint (Anthropic's goes to the
   * beta surface with the call's betas when it has context management: see ./anthropic/provider).
   */
  async count(provider: ModelProvider, call: MessagesCall, signal?: AbortSignal): Promise<number> {
    if (!provider.countTokens) throw new Error(`the ${provider.protocol} connection has no token-count endpoint`);
    const { maxTokens: _maxTokens, ...counted } = call;
    const key = hashString(canonicalJson({ protocol: provider.protocol, request: counted }));
    const hit = this.counts.get(key);
    if (hit !== undefined) return hit;
    const tokens = await provider.countTokens(call, signal);
    this.counts.set(key, tokens);
    return tokens;
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
