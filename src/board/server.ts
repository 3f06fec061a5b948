/**
 * The board's HTTP server: node:http, no framework. It serves the page (three assets from the package,
 * nothing from a CDN), a small JSON API over a `BoardSource`, and each session's live channel as
 * Server-Sent Events. Every request passes the guard (token, Host, and for changes a custom header and
 * the Origin); every answer carries a strict Content-Security-Policy.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FabricError, InvalidInputError } from '../core/errors';
import { PAGE_CSS, pageHtml } from './page/assets';
import { pageScript } from './page/script';
import { flowsScript } from './page/flows';
import { parseGateBody, type BoardFlowSource } from './flow-source';
import { newToken, refusal, SECURITY_HEADERS, type GuardOptions } from './guard';
import { boardAddresses, parsePublicUrls } from './public-url';
import { parseBoardAction, type BoardSource } from './source';

export interface BoardServerOptions {
  source: BoardSource;
  /** Flow runs to list and draw (without it the page's flow section says there is none to show). */
  flows?: BoardFlowSource;
  /** Default 127.0.0.1. Anything but loopback needs `allowRemote: true` (and always has a token). */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default: 24 random bytes. Set it only to give a remote board a token of your own. */
  token?: string;
  allowRemote?: boolean;
  /**
   * The URLs the board is reached at besides its bind address (the machine's IP or DNS name, a proxy's):
   * their Host and Origin are accepted too. http(s), no path. Bound to 0.0.0.0, a board needs one to be
   * opened from another machine.
   */
  publicUrl?: string | readonly string[];
}

export interface BoardServer {
  /** The page's URL, with the token (open this). */
  url: string;
  /** The same without the token (to show that it is refused). */
  origin: string;
  /** The page at each `publicUrl`, with the token (empty without them). */
  publicUrls: string[];
  token: string;
  port: number;
  close(): Promise<void>;
}

/** Binding beyond loopback was asked for without saying so explicitly. */
export class BoardBindError extends FabricError {
  constructor(host: string) {
    super('BOARD_REMOTE_BIND', `host: ${host} is not a loopback address; binding elsewhere exposes your sessions, pass allowRemote: true (fh board --allow-remote) to do it anyway`);
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
/** A message's attachments are up to 24 MB, 32 MB as base64 in JSON (the page sends them in the action). */
const MAX_BODY = 34 * 1024 * 1024;

export async function startBoardServer(options: BoardServerOptions): Promise<BoardServer> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host) && !options.allowRemote) throw new BoardBindError(host);
  if (options.token !== undefined && options.token.length < 16) {
    throw new InvalidInputError('board options', 'token', [{ path: 'token', message: 'must be at least 16 characters' }]);
  }
  const publicUrls = parsePublicUrls(options.publicUrl);
  const token = options.token ?? newToken();
  const guard: GuardOptions = { token, hosts: new Set(), origins: new Set() };
  const script = pageScript();
  const flowsJs = flowsScript();
  /** Open event streams: closing the board ends each and waits until its reads of the session stopped. */
  const streams = new Map<ServerResponse, { abort: AbortController; done: Promise<void> }>();
  /** Requests being answered: closing waits for them, so no call to Temporal outlives the board. */
  const inflight = new Set<Promise<void>>();
  const server: Server = createServer((req, res) => {
    const p = handle(req, res).catch((err) => sendError(res, err));
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://board.invalid');
    const refused = refusal(req, url, guard);
    if (refused) return sendJson(res, refused.status, { error: { code: 'BOARD_REFUSED', message: refused.message } });
    const path = url.pathname;
    if (req.method === 'GET' && path === '/') return send(res, 200, 'text/html; charset=utf-8', pageHtml(token, options.source.namespace));
    if (req.method === 'GET' && path === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', script);
    if (req.method === 'GET' && path === '/flows.js') return send(res, 200, 'text/javascript; charset=utf-8', flowsJs);
    if (req.method === 'GET' && path === '/app.css') return send(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
    if (req.method === 'GET' && path === '/api/sessions') {
      const archived = url.searchParams.get('archived') === '1';
      const status = url.searchParams.get('status') || undefined;
      const label = url.searchParams.get('label') || undefined;
      return sendJson(res, 200, { namespace: options.source.namespace, sessions: await options.source.listSessions({ status, label, archived }) });
    }
    const m = /^\/api\/sessions\/([^/]+)(?:\/(events|audit|replay|actions))?$/.exec(path);
    if (m) {
      const id = decodeURIComponent(m[1]!);
      const what = m[2];
      if (req.method === 'GET' && !what) return sendJson(res, 200, await options.source.sessionView(id));
      if (req.method === 'GET' && what === 'events') return streamEvents(req, res, (from, signal) => options.source.subscribe(id, from, signal), url);
      if (req.method === 'GET' && what === 'audit') return sendJson(res, 200, await options.source.audit(id));
      if (req.method === 'POST' && what === 'replay') return sendJson(res, 200, await options.source.replay(id));
      if (req.method === 'POST' && what === 'actions') {
        const action = parseBoardAction(await readJson(req));
        return sendJson(res, 200, { ok: true, result: (await options.source.act(id, action)) ?? null });
      }
    }
    if (path === '/api/flows' || path.startsWith('/api/flows/')) return flowRoute(req, res, path, url);
    return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `no ${req.method} ${path}` } });
  }

  async function flowRoute(req: IncomingMessage, res: ServerResponse, path: string, url: URL): Promise<void> {
    const flows = options.flows;
    if (req.method === 'GET' && path === '/api/flows') return sendJson(res, 200, { flows: flows ? await flows.listFlows() : [], available: flows !== undefined });
    const m = /^\/api\/flows\/([^/]+)(?:\/(events|gate))?$/.exec(path);
    if (m && flows) {
      const id = decodeURIComponent(m[1]!);
      if (req.method === 'GET' && !m[2]) return sendJson(res, 200, await flows.flowView(id));
      // The stream ends with the run: `fh-end` tells the page so, and it stops reconnecting.
      if (req.method === 'GET' && m[2] === 'events') return streamEvents(req, res, (from, signal) => flows.subscribeFlow(id, from, signal), url, 'fh-end');
      if (req.method === 'POST' && m[2] === 'gate') return sendJson(res, 200, { ok: true, decision: await flows.gate(id, parseGateBody(await readJson(req))) });
    }
    return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `no ${req.method} ${path}` } });
  }

  async function streamEvents(
    req: IncomingMessage,
    res: ServerResponse,
    subscribe: (from: string | undefined, signal: AbortSignal) => AsyncIterable<{ offset: string; event: unknown }>,
    url: URL,
    endEvent?: string,
  ): Promise<void> {
    const lastId = req.headers['last-event-id'];
    const from = typeof lastId === 'string' ? lastId : (url.searchParams.get('from') ?? undefined);
    const abort = new AbortController();
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    res.write('retry: 1000\n\n');
    let finished!: () => void;
    streams.set(res, { abort, done: new Promise<void>((resolve) => (finished = resolve)) });
    const stop = () => abort.abort();
    req.on('close', stop);
    // A comment line every 15 s keeps proxies and idle timeouts from closing a quiet stream.
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
    try {
      for await (const env of subscribe(from, abort.signal)) {
        // JSON has no raw newlines, so one `data:` line carries the event whole.
        res.write(`id: ${env.offset}\nevent: fh\ndata: ${JSON.stringify(env.event)}\n\n`);
      }
      if (endEvent && !abort.signal.aborted) res.write(`event: ${endEvent}\ndata: {}\n\n`);
    } catch (err) {
      if (!abort.signal.aborted) res.write(`event: fh-error\ndata: ${JSON.stringify(errorBody(err).error)}\n\n`);
    } finally {
      clearInterval(ping);
      streams.delete(res);
      res.end();
      finished();
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const addresses = boardAddresses(host, port, LOOPBACK.has(host), publicUrls);
  for (const h of addresses.hosts) guard.hosts.add(h);
  for (const o of addresses.origins) guard.origins.add(o);
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    publicUrls: publicUrls.map((u) => `${u.origin}/?token=${token}`),
    token,
    port,
    close: async () => {
      const open = [...streams.values()];
      for (const s of open) s.abort.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await Promise.all(open.map((s) => s.done));
      await Promise.allSettled([...inflight]);
    },
  };
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

function errorBody(err: unknown): { error: { code: string; message: string; field?: string } } {
  if (err instanceof InvalidInputError) return { error: { code: err.code, message: err.message, field: err.field } };
  const e = err as { code?: unknown; message?: unknown; type?: unknown; field?: unknown };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.type === 'string' ? e.type : 'BOARD_ERROR';
  return { error: { code, message: typeof e?.message === 'string' ? e.message : String(err), ...(typeof e?.field === 'string' ? { field: e.field } : {}) } };
}

function statusFor(code: string): number {
  if (code === 'INVALID_INPUT' || code === 'BOARD_BAD_JSON' || code === 'FLOW_UNKNOWN_CHOICE') return 400;
  if (code === 'SESSION_NOT_FOUND' || code === 'UNKNOWN_TOOL_CALL' || code === 'UNKNOWN_PLAN' || code === 'FLOW_NOT_FOUND') return 404;
  if (code === 'ALREADY_DECIDED' || code === 'SESSION_CLOSED' || code === 'FLOW_NOT_WAITING' || code === 'CONNECTION_LOCKED') return 409;
  if (code === 'REPLAY_UNAVAILABLE') return 501;
  return 500;
}

function sendError(res: ServerResponse, err: unknown): void {
  const body = errorBody(err);
  if (res.headersSent) return void res.end();
  sendJson(res, statusFor(body.error.code), body);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/json')) throw new FabricError('BOARD_BAD_JSON', 'body: send application/json');
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new FabricError('BOARD_BAD_JSON', `body: larger than ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new FabricError('BOARD_BAD_JSON', 'body: not valid JSON');
  }
}
