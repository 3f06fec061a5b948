/**
 * Claude's features over Bedrock and Vertex, through each provider, its official SDK and its fake:
 * signed thinking goes out and comes back verified, prompt-cache breakpoints are read on the next call,
 * and server-side context editing travels with its betas (Bedrock: the body's `anthropic_beta`;
 * Vertex: the `anthropic-beta` header) and reports what it cleared.
 */
import { BedrockProvider } from '../../src/activities/models/bedrock/provider';
import { VertexProvider } from '../../src/activities/models/vertex/provider';
import type { MessagesCall, ModelProvider } from '../../src/activities/models/port';
import type { Entry } from '../../src/core/entries';
import { CONTEXT_MANAGEMENT_BETA } from '../../src/core/context/strategy';
import { callTools, FakeBedrockServer, FakeVertexServer, say } from '../../src/testing';
import type { RecordedRequest } from '../../src/testing';

interface Platform {
  name: string;
  model: string;
  start(opts: Parameters<typeof FakeBedrockServer.start>[0]): Promise<FakeBedrockServer | FakeVertexServer>;
  provider(url: string): ModelProvider;
  betas(req: RecordedRequest): string[];
}

const PLATFORMS: Platform[] = [
  {
    name: 'bedrock',
    model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
    start: (opts) => FakeBedrockServer.start(opts),
    provider: (url) => new BedrockProvider({ baseURL: url, region: 'us-east-1', awsAccessKey: 'AKIDEXAMPLE', awsSecretKey: 'x' }),
    betas: (req) => req.body.anthropic_beta ?? [],
  },
  {
    name: 'vertex',
    model: 'claude-sonnet-4-5@20250929',
    start: (opts) => FakeVertexServer.start(opts),
    provider: (url) => new VertexProvider({ baseURL: url, region: 'us-east5', projectId: 'p', accessToken: 't' }),
    betas: (req) => (req.headers['anthropic-beta'] ?? '').split(',').filter(Boolean),
  },
];

describe.each(PLATFORMS)('Claude features on $name', (platform) => {
  let fake: FakeBedrockServer | FakeVertexServer;
  afterEach(() => fake?.stop());
  const call = (entries: Entry[], extra: Partial<MessagesCall> = {}): MessagesCall => ({ model: platform.model, maxTokens: 200, tools: [], entries, ...extra });

  it('streams signed thinking, which the fake verifies when it is sent back', async () => {
    fake = await platform.start({ script: [say('42', { thinking: 'six times seven' }), say('still 42')] });
    const p = platform.provider(fake.url);
    const first = await p.call(call([{ type: 'user', text: 'the answer?' }], { thinking: { budgetTokens: 1024 } }), { onEvent: () => undefined });
    const thinking = first.entry.content[0] as { type: string; signature: string };
    expect(thinking).toMatchObject({ type: 'thinking', thinking: 'six times seven' });
    expect(thinking.signature).toBeTruthy();
    const again = await p.call(call([{ type: 'user', text: 'the answer?' }, first.entry, { type: 'user', text: 'sure?' }], { thinking: { budgetTokens: 1024 } }), {});
    expect(again.entry.content.at(-1)).toEqual({ type: 'text', text: 'still 42' });
    expect(fake.requests[0]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
  });

  it('places cache breakpoints; the next call reads the prefix the first one wrote', async () => {
    fake = await platform.start({ script: [say('one'), say('two')], models: { [platform.model]: { maxInputTokens: 200_000, minCacheableTokens: 1 } } });
    const p = platform.provider(fake.url);
    const long = 'a long system prompt worth caching '.repeat(40);
    const first = await p.call(call([{ type: 'user', text: 'hi' }], { system: long, cache: { ttl: '5m' } }), {});
    expect(first.usage.cacheCreationInputTokens).toBeGreaterThan(0);
    const second = await p.call(call([{ type: 'user', text: 'hi' }, first.entry, { type: 'user', text: 'more' }], { system: long, cache: { ttl: '5m' } }), {});
    expect(second.usage.cacheReadInputTokens).toBeGreaterThan(0);
  });

  it('sends server-side context editing with its betas, and reads what the server cleared', async () => {
    fake = await platform.start({
      script: [callTools({ name: 'read', input: { path: 'a' }, id: 'toolu_a' }), callTools({ name: 'read', input: { path: 'b' }, id: 'toolu_b' }), say('done')],
    });
    const p = platform.provider(fake.url);
    const tools = [{ name: 'read', input_schema: { type: 'object' } }];
    const entries: Entry[] = [{ type: 'user', text: 'read both' }];
    const contextManagement = {
      edits: [{ type: 'clear_tool_uses_20250919' as const, trigger: { type: 'input_tokens' as const, value: 1 }, keep: { type: 'tool_uses' as const, value: 1 } }],
      betas: [CONTEXT_MANAGEMENT_BETA],
    };
    let result;
    for (const id of ['toolu_a', 'toolu_b', undefined]) {
      result = await p.call(call(entries, { tools, contextManagement }), { onEvent: () => undefined });
      entries.push(result.entry);
      if (id) entries.push({ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: id, content: 'x'.repeat(200) }] });
    }
    expect(fake.requests.every((r) => platform.betas(r).includes(CONTEXT_MANAGEMENT_BETA))).toBe(true);
    expect(fake.requests.at(-1)!.body.context_management).toEqual({ edits: contextManagement.edits });
    expect(result!.contextManagement!.applied[0]).toMatchObject({ type: 'clear_tool_uses_20250919', clearedToolUses: 1 });
  });
});
