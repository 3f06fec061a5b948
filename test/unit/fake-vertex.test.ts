/**
 * The Vertex fake (src/testing/vertex) checks what AnthropicVertex sends to Vertex AI and refuses what
 * the real endpoint refuses; its SSE stream parses in the official SDK.
 */
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { APIError } from '@anthropic-ai/sdk';
import { FakeVertexServer, say } from '../../src/testing';

const MODEL = 'claude-sonnet-4-5@20250929';
const PREDICT = `/v1/projects/proj/locations/us-east5/publishers/anthropic/models/${MODEL}`;

let fake: FakeVertexServer;
afterEach(() => fake?.stop());

/** A stub of google-auth-library's client: the one call the SDK makes of it. */
const authClient = (token = 'ya29.fake') => ({ projectId: null, getRequestHeaders: async () => new Headers({ authorization: `Bearer ${token}` }) });

function sdk(token?: string): AnthropicVertex {
  return new AnthropicVertex({ baseURL: fake.url, region: 'us-east5', projectId: 'proj', authClient: authClient(token) as never, maxRetries: 0 });
}

function post(path: string, body: unknown, headers: Record<string, string> = { authorization: 'Bearer ya29.fake' }) {
  return fetch(fake.url.replace(/\/v1$/, '') + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

const valid = { anthropic_version: 'vertex-2023-10-16', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

describe('FakeVertexServer', () => {
  it("accepts AnthropicVertex's request and streams SSE the SDK parses", async () => {
    fake = await FakeVertexServer.start({ script: [say('hello from vertex')], accessToken: 'ya29.fake', projectId: 'proj', region: 'us-east5' });
    const stream = await sdk().messages.create({ ...valid, model: MODEL, stream: true } as never);
    let text = '';
    const types: string[] = [];
    for await (const e of stream as unknown as AsyncIterable<{ type: string; delta?: { text?: string } }>) {
      types.push(e.type);
      text += e.delta?.text ?? '';
    }
    expect(text).toBe('hello from vertex');
    expect(types[types.length - 1]).toBe('message_stop');
    const [req] = fake.requests;
    expect(decodeURIComponent(req!.path)).toBe(`${PREDICT}:streamRawPredict`);
    expect(req!.headers['authorization']).toBe('Bearer ya29.fake');
    expect(req!.body).not.toHaveProperty('model');
    expect(req!.body.anthropic_version).toBe('vertex-2023-10-16');
    expect(fake.messageRequests()[0]!.body.model).toBe(MODEL);
  });

  it('counts tokens at count-tokens:rawPredict', async () => {
    fake = await FakeVertexServer.start({});
    const { max_tokens: _m, ...countable } = valid;
    const counted = await sdk().messages.countTokens({ ...countable, model: MODEL } as never);
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(fake.requests[0]!.path).toBe('/v1/projects/proj/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict');
  });

  it("refuses the SDK's own version (2026-10-21), a missing anthropic_version, a body with model, a stream at rawPredict", async () => {
    fake = await FakeVertexServer.start({ script: [say('never')] });
    const err = (await sdk()
      .messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e)) as APIError;
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/anthropic_version: Input should be 'vertex-2023-10-16'/);
    const { anthropic_version: _v, ...noVersion } = valid;
    expect((await post(`${PREDICT}:rawPredict`, noVersion)).status).toBe(400);
    const withModel = await post(`${PREDICT}:rawPredict`, { ...valid, model: MODEL });
    expect(withModel.status).toBe(400);
    expect(((await withModel.json()) as { error: { message: string } }).error.message).toBe('model: Extra inputs are not permitted');
    expect((await post(`${PREDICT}:rawPredict`, { ...valid, stream: true })).status).toBe(400);
    expect(fake.remaining()).toBe(1);
  });

  it('refuses a missing or malformed Authorization, another token, another project, an unknown model', async () => {
    fake = await FakeVertexServer.start({ script: [say('never')], accessToken: 'ya29.fake', projectId: 'proj' });
    const none = await post(`${PREDICT}:rawPredict`, valid, {});
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
    expect((await post(`${PREDICT}:rawPredict`, valid, { authorization: 'Basic dXNlcjpwYXNz' })).status).toBe(401);
    const other = (await sdk('ya29.other')
      .messages.create({ ...valid, model: MODEL } as never)
      .catch((e: unknown) => e)) as APIError;
    expect(other.status).toBe(401);
    expect((await post(PREDICT.replace('/proj/', '/elsewhere/') + ':rawPredict', valid)).status).toBe(403);
    const unknown = await post('/v1/projects/proj/locations/us-east5/publishers/anthropic/models/gpt-4o:rawPredict', valid);
    expect(unknown.status).toBe(404);
    expect(fake.remaining()).toBe(1);
  });
});
