/**
 * A protocol-faithful fake of Claude on Google Vertex AI, for `@anthropic-ai/vertex-sdk`'s
 * AnthropicVertex. Like the Anthropic fake it is not a model: it plays a script (the same steps), through
 * a FakeAnthropicServer of its own (`fake.anthropic`). What it checks is Vertex's transport:
 *
 * - `POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict` and
 *   `:streamRawPredict` (the body's `stream` must agree), the model a Vertex one (`claude-…`, `@version`
 *   optional); `…/models/count-tokens:rawPredict` for counts (there the body names the model);
 * - `Authorization: Bearer …` (a Google OAuth access token);
 * - a JSON body with `anthropic_version: 'vertex-2023-10-16'` and no `model` (it is in the path).
 *
 * Google's own refusals (credentials, project, unknown model) are in Google's shape
 * (`{ error: { code, message, status } }`); the rest is Anthropic's, since rawPredict hands the body to
 * Anthropic's server and its answer back as it is: errors (an overflow is "prompt is too long"), JSON
 * replies, and SSE streams byte for byte.
 *
 * ```ts
 * const fake = await FakeVertexServer.start({ script: [say('hi')] });
 * // client: new AnthropicVertex({ baseURL: fake.url, region: 'us-east5', projectId: 'p', authClient })
 * ```
 * `fake.url` ends in `/v1`, as Vertex's base URL does.
 */
import { PlatformFake, type Listening, type PlatformFakeOptions, type PlatformReply } from '../anthropic/platform-fake';
import type { RecordedRequest } from '../anthropic/fake-anthropic-script';

export const FAKE_VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export interface FakeVertexOptions extends PlatformFakeOptions {
  /** When set, the bearer token must be it (else 401 UNAUTHENTICATED). */
  accessToken?: string;
  /** When set, the path's project must be it (else 403 PERMISSION_DENIED). */
  projectId?: string;
  /** When set, the path's location must be it (else 403 PERMISSION_DENIED). */
  region?: string;
}

const PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;
const MODEL = /^claude-[\w.-]+(?:@[\w.-]+)?$/;

function googleError(code: number, status: string, message: string): PlatformReply {
  return { status: code, headers: {}, body: { error: { code, message, status } } };
}

function invalid(message: string): PlatformReply {
  return { status: 400, headers: {}, body: { type: 'error', error: { type: 'invalid_request_error', message } } };
}

export class FakeVertexServer extends PlatformFake {
  private constructor(
    anthropic: PlatformFake['anthropic'],
    listening: Listening,
    private readonly opts: FakeVertexOptions,
  ) {
    super(anthropic, listening, '/v1');
  }

  static start(opts: FakeVertexOptions = {}): Promise<FakeVertexServer> {
    const { accessToken: _t, projectId: _p, region: _r, ...rest } = opts;
    return PlatformFake.listen(rest, (anthropic, listening) => new FakeVertexServer(anthropic, listening, opts));
  }

  protected internalError(message: string): PlatformReply {
    return googleError(500, 'INTERNAL', message);
  }

  protected async handle(rec: RecordedRequest, _raw: Buffer, signal: AbortSignal): Promise<PlatformReply> {
    const route = rec.method === 'POST' ? PATH.exec(rec.path) : null;
    if (!route) return googleError(404, 'NOT_FOUND', `The requested URL ${rec.path} was not found on this server.`);
    const token = /^Bearer (\S+)$/.exec(rec.headers['authorization'] ?? '')?.[1];
    if (token === undefined) {
      return googleError(401, 'UNAUTHENTICATED', 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
    }
    if (this.opts.accessToken !== undefined && token !== this.opts.accessToken) {
      return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
    }
    const [, project, region, rawModel, method] = route as unknown as [string, string, string, string, string];
    const model = decodeURIComponent(rawModel);
    const resource = `projects/${project}/locations/${region}/publishers/anthropic/models/${model}`;
    if ((this.opts.projectId !== undefined && project !== this.opts.projectId) || (this.opts.region !== undefined && region !== this.opts.region)) {
      return googleError(403, 'PERMISSION_DENIED', `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/${resource}' (or it may not exist).`);
    }
    const body = rec.body as Record<string, unknown>;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    const { anthropic_version: version, ...params } = body;
    if (version === undefined) return invalid('anthropic_version: Field required');
    if (version !== FAKE_VERTEX_ANTHROPIC_VERSION) return invalid(`anthropic_version: Input should be '${FAKE_VERTEX_ANTHROPIC_VERSION}'`);
    const betas = (rec.headers['anthropic-beta'] ?? '').split(',').map((b) => b.trim()).filter(Boolean);

    if (model === 'count-tokens') {
      if (method !== 'rawPredict') return googleError(404, 'NOT_FOUND', `Publisher Model \`${resource}\` not found.`);
      if (typeof params.model !== 'string') return invalid('model: Field required');
      return this.passThrough(await this.relay('/v1/messages/count_tokens', params, betas, signal));
    }
    if (!MODEL.test(model)) return googleError(404, 'NOT_FOUND', `Publisher Model \`${resource}\` not found.`);
    if ('model' in params) return invalid('model: Extra inputs are not permitted');
    const streaming = method === 'streamRawPredict';
    if ((params.stream === true) !== streaming) {
      return invalid(streaming ? 'stream: streamRawPredict needs `stream: true`' : 'stream: `stream: true` needs streamRawPredict');
    }
    const res = await this.relay('/v1/messages', { ...params, model }, betas, signal);
    if (res.status !== 200 || !streaming) return this.passThrough(res);
    // Anthropic's server-sent events, byte for byte.
    return { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' }, body: undefined, stream: res.body! as unknown as AsyncIterable<Uint8Array> };
  }

  /** Anthropic's answer as it came (its JSON body, error or not, and its status). */
  private async passThrough(res: Response): Promise<PlatformReply> {
    const headers: Record<string, string> = {};
    for (const name of ['retry-after', 'retry-after-ms']) if (res.headers.get(name) !== null) headers[name] = res.headers.get(name)!;
    return { status: res.status, headers, body: await res.json() };
  }
}
