/**
 * The Bedrock fake (src/testing/bedrock) checks what AnthropicBedrock sends to Bedrock's runtime and
 * refuses what the real endpoint refuses; its event stream parses in the official SDK.
 */
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { APIError } from '@anthropic-ai/sdk';
import { FakeBedrockServer, say } from '../../src/testing';

const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const SIGV4 = 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261128/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=' + 'a'.repeat(64);

let fake: FakeBedrockServer;
afterEach(() => fake?.stop());

function sdk(): AnthropicBedrock {
  return new AnthropicBedrock({ baseURL: fake.url, awsRegion: 'us-east-1', awsAccessKey: 'AKIDEXAMPLE', awsSecretKey: 'x', maxRetries: 0 });
}

/** A request as a hand-written client would send it (the SDK could not send these mistakes). */
function post(path: string, body: unknown, headers: Record<string, string> = { authorization: SIGV4, 'x-amz-date': '20261128T120000Z' }) {
  return fetch(fake.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

const valid = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

describe('FakeBedrockServer', () => {
  it("accepts AnthropicBedrock's signed request and streams event-stream frames the SDK parses", async () => {
    fake = await FakeBedrockServer.start({ script: [say('hello from bedrock')], awsAccessKey: 'AKIDEXAMPLE', region: 'us-east-1' });
    const stream = await sdk().messages.create({ ...valid, model: MODEL, stream: true } as never);
    const types: string[] = [];
    let text = '';
    for await (const e of stream as unknown as AsyncIterable<{ type: string; delta?: { text?: string } }>) {
      types.push(e.type);
      text += e.delta?.text ?? '';
    }
    expect(text).toBe('hello from bedrock');
    expect(types[0]).toBe('message_start');
    expect(types[types.length - 1]).toBe('message_stop');
    const [req] = fake.requests;
    expect(req!.path).toBe(`/model/${MODEL}/invoke-with-response-stream`);
    expect(req!.headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    expect(req!.body).not.toHaveProperty('model');
    expect(req!.body).not.toHaveProperty('stream');
    expect(req!.body.anthropic_version).toBe('bedrock-2023-05-31');
    // The relayed request is Anthropic's, the model back in its body.
    expect(fake.messageRequests()[0]!.body.model).toBe(MODEL);
  });

  it('answers /invoke with the message as JSON and Bedrock token-count headers', async () => {
    fake = await FakeBedrockServer.start({ script: [say('plain')] });
    const res = await post(`/model/${MODEL}/invoke`, valid);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-amzn-bedrock-output-token-count')).not.toBeNull();
    expect(((await res.json()) as { content: Array<{ text: string }> }).content[0]!.text).toBe('plain');
  });

  it("refuses the SDK's own version (2026-10-21), a missing anthropic_version, and a body with model", async () => {
    fake = await FakeBedrockServer.start({ script: [say('never')] });
    const err = await sdk()
      .messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).headers?.get('x-amzn-errortype')).toMatch(/^ValidationException:/);
    expect((err as APIError).message).toMatch(/anthropic_version: 2026-10-21 is not a valid enum value/);

    const { anthropic_version: _v, ...noVersion } = valid;
    const missing = await post(`/model/${MODEL}/invoke`, noVersion);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { message: string }).message).toMatch(/required key \[anthropic_version\] not found/);

    const withModel = await post(`/model/${MODEL}/invoke`, { ...valid, model: MODEL });
    expect(withModel.status).toBe(400);
    expect(withModel.headers.get('x-amzn-errortype')).toMatch(/^ValidationException/);
    expect(((await withModel.json()) as { message: string }).message).toMatch(/extraneous key \[model\] is not permitted/);
    expect(fake.remaining()).toBe(1);
  });

  it('refuses a missing or malformed Authorization, a missing x-amz-date, and an Anthropic model id', async () => {
    fake = await FakeBedrockServer.start({ script: [say('never')] });
    const none = await post(`/model/${MODEL}/invoke`, valid, {});
    expect(none.status).toBe(403);
    expect(none.headers.get('x-amzn-errortype')).toMatch(/^MissingAuthenticationTokenException/);
    const malformed = await post(`/model/${MODEL}/invoke`, valid, { authorization: 'AWS4-HMAC-SHA256 garbage', 'x-amz-date': '20261128T120000Z' });
    expect(malformed.status).toBe(403);
    expect(malformed.headers.get('x-amzn-errortype')).toMatch(/^IncompleteSignatureException/);
    const noDate = await post(`/model/${MODEL}/invoke`, valid, { authorization: SIGV4 });
    expect(noDate.status).toBe(403);
    const tampered = await post(`/model/${MODEL}/invoke`, valid, { authorization: SIGV4, 'x-amz-date': '20261128T120000Z', 'x-amz-content-sha256': '0'.repeat(64) });
    expect(tampered.status).toBe(403);
    expect(tampered.headers.get('x-amzn-errortype')).toMatch(/^InvalidSignatureException/);
    const anthropicId = await post('/model/claude-sonnet-4-5/invoke', valid);
    expect(anthropicId.status).toBe(400);
    expect(((await anthropicId.json()) as { message: string }).message).toBe('The provided model identifier is invalid.');
    expect(fake.remaining()).toBe(1);
  });

  it('refuses another access key than the one it was given', async () => {
    fake = await FakeBedrockServer.start({ script: [say('never')], awsAccessKey: 'AKIDOTHER' });
    const err = (await sdk()
      .messages.create({ ...valid, model: MODEL } as never)
      .catch((e: unknown) => e)) as APIError;
    expect(err.status).toBe(403);
    expect(err.headers?.get('x-amzn-errortype')).toMatch(/^UnrecognizedClientException/);
  });
});
