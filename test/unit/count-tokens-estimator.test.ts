/**
 * compaction.estimator 'count-tokens': the threshold decision uses the provider's exact count (the
 * fake's count_tokens endpoint), cached per request, and falls back to the heuristic when the count fails.
 */
import { AnthropicProvider } from '../../src/activities/models/anthropic/provider';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { init, type AgentEvent } from '@fabric-harness/sdk';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { decideWithExactCount, TokenCountCache } from '../../src/activities/models/token-counts';
import { decisionFacts } from '../../src/core/context/compaction/decide';
import { resolveCompactionSettings } from '../../src/core/context/settings';
import type { Entry } from '../../src/core/entries';
import { savedAnthropicEnv } from '../support/anthropic-env';

const isSummary = (body: unknown) => String((body as { system?: unknown }).system ?? '').startsWith('[fabric-harness:summarize]');
// One-letter words: ~2 characters per token for the heuristic (chars/4), one token each for the fake's tokenizer.
const letters = Array.from({ length: 400 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(' ');
const countRequests = (fake: FakeAnthropicServer) => fake.requests.filter((r) => r.path === '/v1/messages/count_tokens');

describe("compaction.estimator 'count-tokens'", () => {
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({ route: (r) => (isSummary(r.body) ? say('## Goal\nLetters.') : undefined) });
    env.pointAt(fake.url);
  });
  afterAll(async () => {
    await fake.stop();
    env.restore();
  });

  async function run(estimator: 'heuristic' | 'count-tokens') {
    const events: AgentEvent[] = [];
    const before = fake.requests.length;
    const h = await init({
      contextWindowTokens: 10_000,
      compaction: { enabled: true, compactAtTokens: 300, keepRecentEntries: 1, estimator },
      onEvent: (e) => events.push(e),
    });
    const session = await h.session();
    fake.enqueue(say('ok'), say('done'));
    await session.prompt('hi');
    expect(await session.prompt(letters)).toBe('done');
    const counts = fake.requests.slice(before).filter((r) => r.path === '/v1/messages/count_tokens');
    return { events, counts };
  }

  it('the heuristic does not compact this request (the control case)', async () => {
    const { events, counts } = await run('heuristic');
    expect(counts).toHaveLength(0);
    expect(events.some((e) => e.type === 'compaction_started')).toBe(false);
  });

  it('compacts from the exact count where the heuristic would not', async () => {
    const { events, counts } = await run('count-tokens');
    expect(counts).toHaveLength(2); // one per threshold decision (two prompts)
    const started = events.find((e) => e.type === 'compaction_started')?.data as { estimatedTokens: number } | undefined;
    expect(started).toBeDefined();
    // The decision's number is the provider's count of the exact request, not the heuristic's.
    expect(started!.estimatedTokens).toBe(counts[1]!.inputTokens);
    expect(started!.estimatedTokens).toBeGreaterThan(300);
  });

  const entries: Entry[] = [{ type: 'user', text: 'hello' }, { type: 'user', text: letters }];
  const settings = resolveCompactionSettings({ compactAtTokens: 300, keepRecentEntries: 1, estimator: 'count-tokens' }, undefined, 10_000, { enabled: true });
  const facts = decisionFacts({ entries, settings });

  it('the cache asks once for the same request', async () => {
    const client = new AnthropicProvider({ apiKey: 'k', baseURL: fake.url });
    const cache = new TokenCountCache();
    const call = { model: 'claude-test', maxTokens: 100, tools: [], entries };
    const before = countRequests(fake).length;
    const a = await cache.count(client, call);
    const b = await cache.count(client, call);
    expect(b).toBe(a);
    expect(countRequests(fake).length - before).toBe(1);
    const decision = await decideWithExactCount(facts, () => cache.count(client, call));
    expect(decision).toMatchObject({ countedTokens: a, estimatedTokens: a, estimator: 'count-tokens', compact: true });
    expect(countRequests(fake).length - before).toBe(1);
  });

  it('rejects an unknown estimator, naming the field', () => {
    expect(() => resolveCompactionSettings({ estimator: 'exact' } as never, undefined, 10_000, { enabled: true })).toThrow(/estimator/);
  });

  it('a failing count endpoint falls back to the heuristic, saying so', async () => {
    const broken = http.createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'nope' } }));
    });
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
    try {
      const client = new AnthropicProvider({ apiKey: 'k', baseURL: `http://127.0.0.1:${(broken.address() as AddressInfo).port}` });
      const call = { model: 'claude-test', maxTokens: 100, tools: [], entries };
      const decision = await decideWithExactCount(facts, () => new TokenCountCache().count(client, call));
      expect(decision.estimator).toBe('heuristic-fallback');
      expect(decision.countedTokens).toBeUndefined();
      expect(decision.estimatedTokens).toBe(facts.estimatedTokens);
    } finally {
      await new Promise((r) => broken.close(r));
    }
  });
});
