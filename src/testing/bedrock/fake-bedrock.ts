/**
 * A protocol-faithful fake of Claude on Amazon Bedrock's runtime (InvokeModel and
 * InvokeModelWithResponseStream), for `@anthropic-ai/bedrock-sdk`'s AnthropicBedrock. Like the
 * Anthropic fake it is not a model: it plays a script (the same steps: `say`, `callTools`, `fail`, …),
 * through a FakeAnthropicServer of its own (`fake.anthropic`). What it checks is Bedrock's transport:
 *
 * - `POST /model/{modelId}/invoke` and `/model/{modelId}/invoke-with-response-stream`, the id a Bedrock
 *   one (`anthropic.claude-…`, an inference profile's `us.anthropic.claude-…`, or an ARN);
 * - an `Authorization` header: SigV4 (`AWS4-HMAC-SHA256 Credential=…/{date}/{region}/bedrock/aws4_request,
 *   SignedHeaders=…, Signature=…` with `x-amz-date`, and `x-amz-content-sha256` matching the body when
 *   sent) or a Bedrock API key (`Bearer …`);
 * - a JSON body with `anthropic_version: 'bedrock-2023-05-31'` and neither `model` nor `stream` (they
 *   are in the path), betas in `anthropic_beta`.
 *
 * What fails is refused as Bedrock refuses it (403 MissingAuthenticationTokenException, 400
 * ValidationException "Malformed input request: …", …: an AWS exception name in `x-amzn-errortype`, a
 * `{ message }` body). The relayed request's own errors come back in Bedrock's shapes (an overflow is a
 * 400 ValidationException with the words "prompt is too long"); a stream is AWS event-stream frames
 * (`application/vnd.amazon.eventstream`), an error in it an exception frame.
 *
 * ```ts
 * const fake = await FakeBedrockServer.start({ script: [say('hi')] });
 * // client: new AnthropicBedrock({ baseURL: fake.url, awsRegion: 'us-east-1', awsAccessKey: 'AKIDEXAMPLE', awsSecretKey: 'x' })
 * ```
 */
import { createHash } from 'node:crypto';
import { anthropicError, PlatformFake, sseEvents, type Listening, type PlatformFakeOptions, type PlatformReply } from '../anthropic/platform-fake';
import type { RecordedRequest } from '../anthropic/fake-anthropic-script';
import { bedrockError, bedrockErrorFor, chunkFrame, ensureCodec, exceptionFrame, streamExceptionFor } from './fake-bedrock-transport';

export const FAKE_BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

export interface FakeBedrockOptions extends PlatformFakeOptions {
  /** When set, the SigV4 credential's access key id must be it (else 403 UnrecognizedClientException). */
  awsAccessKey?: string;
  /** When set, the credential's region must be it (else 403 InvalidSignatureException). */
  region?: string;
  /** When set, a bearer token (a Bedrock API key) must be it; unset, any non-empty one passes. */
  apiKey?: string;
}

const PATH = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/;
const MODEL_ID = /^(?:(?:[a-z]{2,6}\.)?anthropic\.claude-[\w.:-]+|arn:aws[\w-]*:bedrock:[\w-]+:\d*:[\w-]+\/[\w.:/-]+)$/;
const SIGV4 = /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([\w-]+)\/([\w-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;
const malformed = (why: string) => `Malformed input request: ${why}, please reformat your input and try again.`;

export class FakeBedrockServer extends PlatformFake {
  private seq = 0;

  private constructor(
    anthropic: PlatformFake['anthropic'],
    listening: Listening,
    private readonly opts: FakeBedrockOptions,
  ) {
    super(anthropic, listening);
  }

  static start(opts: FakeBedrockOptions = {}): Promise<FakeBedrockServer> {
    const { awsAccessKey: _a, region: _r, apiKey: _k, ...rest } = opts;
    return PlatformFake.listen(rest, (anthropic, listening) => new FakeBedrockServer(anthropic, listening, opts));
  }

  protected internalError(message: string): PlatformReply {
    return bedrockError(500, 'InternalServerException', message, this.requestId());
  }

  private requestId(): string {
    return `00000000-0000-4000-8000-${String(++this.seq).padStart(12, '0')}`;
  }

  protected async handle(rec: RecordedRequest, raw: Buffer, signal: AbortSignal): Promise<PlatformReply> {
    const id = this.requestId();
    const route = rec.method === 'POST' ? PATH.exec(rec.path) : null;
    if (!route) return bedrockError(404, 'UnknownOperationException', 'Unknown operation', id);
    const refused = this.authRefusal(rec, raw);
    if (refused) return bedrockError(403, refused.type, refused.message, id);

    const modelId = decodeURIComponent(route[1]!);
    if (!MODEL_ID.test(modelId)) return bedrockError(400, 'ValidationException', 'The provided model identifier is invalid.', id);
    const body = rec.body as Record<string, unknown>;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return bedrockError(400, 'ValidationException', malformed('expected type: JSONObject'), id);
    for (const key of ['model', 'stream']) if (key in body) return bedrockError(400, 'ValidationException', malformed(`#: extraneous key [${key}] is not permitted`), id);
    const { anthropic_version: version, anthropic_beta: betas, ...params } = body;
    if (version === undefined) return bedrockError(400, 'ValidationException', malformed('#: required key [anthropic_version] not found'), id);
    if (version !== FAKE_BEDROCK_ANTHROPIC_VERSION) return bedrockError(400, 'ValidationException', malformed(`#/anthropic_version: ${String(version)} is not a valid enum value`), id);
    if (betas !== undefined && !(Array.isArray(betas) && betas.every((b) => typeof b === 'string'))) {
      return bedrockError(400, 'ValidationException', malformed('#/anthropic_beta: expected type: JSONArray of strings'), id);
    }

    const streaming = route[2] === 'invoke-with-response-stream';
    if (streaming) ensureCodec();
    const res = await this.relay('/v1/messages', { ...params, model: modelId, ...(streaming ? { stream: true } : {}) }, (betas as string[] | undefined) ?? [], signal);
    if (res.status !== 200) {
      const error = anthropicError(await res.json().catch(() => undefined));
      const mapped = bedrockErrorFor(res.status, error.type);
      return bedrockError(mapped.status, mapped.type, error.message, id);
    }
    if (!streaming) {
      const message = (await res.json()) as { usage?: { input_tokens?: number; output_tokens?: number } };
      return {
        status: 200,
        headers: {
          'x-amzn-requestid': id,
          'x-amzn-bedrock-input-token-count': String(message.usage?.input_tokens ?? 0),
          'x-amzn-bedrock-output-token-count': String(message.usage?.output_tokens ?? 0),
        },
        body: message,
      };
    }
    return {
      status: 200,
      headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': id, 'x-amzn-bedrock-content-type': 'application/json' },
      body: undefined,
      stream: frames(res.body!, Date.now()),
    };
  }

  /** Why the request's credentials are refused (AWS's exception and words), or undefined. */
  private authRefusal(rec: RecordedRequest, raw: Buffer): { type: string; message: string } | undefined {
    const auth = rec.headers['authorization'];
    if (!auth) return { type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
    const bearer = /^Bearer (\S+)$/.exec(auth)?.[1];
    if (bearer !== undefined) {
      return this.opts.apiKey !== undefined && bearer !== this.opts.apiKey ? { type: 'UnrecognizedClientException', message: 'Invalid API Key format: Must start with pre-defined prefix' } : undefined;
    }
    const m = SIGV4.exec(auth);
    if (!m) return { type: 'IncompleteSignatureException', message: `Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters of AWS4-HMAC-SHA256. Authorization=${auth.split(' ')[0]}` };
    const [, accessKey, date, region, service, signed] = m;
    const amzDate = rec.headers['x-amz-date'];
    if (!amzDate || !/^\d{8}T\d{6}Z$/.test(amzDate)) return { type: 'IncompleteSignatureException', message: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header." };
    if (!amzDate.startsWith(date!)) return { type: 'InvalidSignatureException', message: `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${date}' != '${amzDate.slice(0, 8)}'` };
    if (service !== 'bedrock') return { type: 'InvalidSignatureException', message: `Credential should be scoped to correct service: 'bedrock'.` };
    if (this.opts.region !== undefined && region !== this.opts.region) return { type: 'InvalidSignatureException', message: `Credential should be scoped to a valid region, not '${region}'.` };
    if (!signed!.split(';').includes('host') || !signed!.split(';').includes('x-amz-date')) {
      return { type: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided.' };
    }
    const sha = rec.headers['x-amz-content-sha256'];
    if (sha !== undefined && sha !== createHash('sha256').update(raw).digest('hex')) {
      return { type: 'InvalidSignatureException', message: 'The provided x-amz-content-sha256 header does not match what was computed.' };
    }
    if (this.opts.awsAccessKey !== undefined && accessKey !== this.opts.awsAccessKey) {
      return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
    }
    return undefined;
  }
}

/**
 * The relayed SSE stream as Bedrock's event stream: each event a `chunk` frame (no pings: Bedrock
 * sends none), `message_stop` with Bedrock's invocation metrics, an `error` event an exception frame.
 */
async function* frames(sse: ReadableStream<Uint8Array>, started: number): AsyncGenerator<Uint8Array> {
  let input = 0;
  let output = 0;
  let first: number | undefined;
  for await (const { event, data } of sseEvents(sse)) {
    if (event === 'ping') continue;
    const parsed = JSON.parse(data) as Record<string, any>;
    first ??= Date.now() - started;
    if (event === 'error') {
      const error = anthropicError(parsed);
      yield exceptionFrame(streamExceptionFor(error.type), error.message);
      return;
    }
    if (event === 'message_start') input = parsed.message?.usage?.input_tokens ?? 0;
    if (event === 'message_delta') output = parsed.usage?.output_tokens ?? output;
    if (event === 'message_stop') {
      parsed['amazon-bedrock-invocationMetrics'] = { inputTokenCount: input, outputTokenCount: output, invocationLatency: Date.now() - started, firstByteLatency: first };
    }
    yield chunkFrame(parsed);
  }
}
