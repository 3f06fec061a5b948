/**
 * The fake refuses unknown top-level request fields as the real Messages API does (400
 * invalid_request_error "<field>: Extra inputs are not permitted"), through the REAL @anthropic-ai/sdk
 * client; and every field our own request code sends is one the API knows.
 */
import { AnthropicProvider } from '../../src/activities/models/anthropic/provider';
import Anthropic from '@anthropic-ai/sdk';
import { callMessages, streamMessages, type MessagesCall } from '../../src/activities/models/anthropic/messages';
import { TokenCountCache } from '../../src/activities/models/token-counts';
import { RequestBodies } from '../../src/activities/models/anthropic/request-body';
import { FakeAnthropicServer, say } from '../../src/testing/anthropic/fake-anthropic';
import type { Entry } from '../../src/core/entries';

const MODEL = 'claude-fake-1';
let server: FakeAnthropicServer;
let client: Anthropic;

beforeEach(async () => {
  server = await FakeAnthropicServer.start({ route: () => say('ok') });
  client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
});
afterEach(async () => {
  await server?.stop();
});

/** The error `p` rejects with. */
async function refusal(p: Promise<unknown>): Promise<any> {
  return p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e) => e,
  );
}

const question = [{ role: 'user' as const, content: 'hi' }];

describe('unknown top-level fields', () => {
  it('a misspelt /v1/messages parameter is a 400 invalid_request_error, raised by the SDK as BadRequestError', async () => {
    const err = await refusal(client.messages.create({ model: MODEL, max_tokens: 100, messages: question, stop_sequence: ['END'] } as never));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'stop_sequence: Extra inputs are not permitted' } });
    expect(err.message).toContain('stop_sequence: Extra inputs are not permitted');
    // Parameters the API version the SDK sends no longer has are unknown too.
    expect((await refusal(client.messages.create({ model: MODEL, max_tokens: 100, messages: question, temperature: 0.5 } as never))).message).toContain(
      'temperature: Extra inputs are not permitted',
    );
  });

  it('count_tokens takes fewer fields: max_tokens, stream, metadata and misspellings are refused', async () => {
    for (const [field, value] of [['max_tokens', 100], ['stream', false], ['metadata', { user_id: 'u' }], ['tool', []]] as const) {
      const err = await refusal(client.messages.countTokens({ model: MODEL, messages: question, [field]: value } as never));
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.error.error).toEqual({ type: 'invalid_request_error', message: `${field}: Extra inputs are not permitted` });
    }
    expect((await client.messages.countTokens({ model: MODEL, messages: question })).input_tokens).toBeGreaterThan(0);
  });

  it('beta-only fields are unknown without a beta header; with one they are the beta surface', async () => {
    const err = await refusal(client.messages.create({ model: MODEL, max_tokens: 100, messages: question, mcp_servers: [] } as never));
    expect(err.error.error.message).toBe('mcp_servers: Extra inputs are not permitted');
    const ok = await client.beta.messages.create({ model: MODEL, max_tokens: 100, messages: question, mcp_servers: [], betas: ['mcp-client-2025-11-20'] } as never);
    expect((ok as Anthropic.Message).content[0]).toMatchObject({ type: 'text', text: 'ok' });
  });

  it('every documented /v1/messages field is accepted', async () => {
    const body = {
      model: MODEL,
      max_tokens: 100,
      messages: question,
      system: 'be brief',
      metadata: { user_id: 'u-1' },
      stop_sequences: ['END'],
      service_tier: 'auto',
      inference_geo: 'us',
      tools: [{ name: 'look', description: 'd', input_schema: { type: 'object' as const, properties: {} } }],
      tool_choice: { type: 'auto' as const },
    };
    expect((await client.messages.create(body as never)) as Anthropic.Message).toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
  });
});

describe('what our request code sends', () => {
  const entries: Entry[] = [{ type: 'user', text: 'hello' }];
  const tools = [{ name: 'grow', description: 'g', input_schema: { type: 'object', properties: {} } }] as MessagesCall['tools'];
  const plain: MessagesCall = { model: MODEL, maxTokens: 1000, system: 'sys', tools, entries, cache: { ttl: '1h' }, thinking: { budgetTokens: 2048 } };
  const managed: MessagesCall = {
    ...plain,
    contextManagement: { betas: ['context-management-2025-06-27'], edits: [{ type: 'clear_tool_uses_20250919' }] } as unknown as MessagesCall['contextManagement'],
  };

  it.each([
    ['plain', plain],
    ['with context management', managed],
  ])('%s: messages (whole, pre-serialised, streamed) and count_tokens are all accepted', async (_name, call) => {
    expect((await callMessages(client, call)).entry.type).toBe('assistant');
    const encoded = new RequestBodies().encode(call, false);
    expect((await callMessages(client, call, undefined, encoded)).entry.type).toBe('assistant');
    expect((await streamMessages(client, call, () => undefined, undefined, new RequestBodies().encode(call, true))).entry.type).toBe('assistant');
    expect(await new TokenCountCache().count(new AnthropicProvider({ apiKey: 'test', baseURL: server.url }), call)).toBeGreaterThan(0);
    const counted = server.requests.find((r) => r.path === '/v1/messages/count_tokens')!;
    expect('context_management' in counted.body).toBe(call.contextManagement !== undefined);
  });
});
