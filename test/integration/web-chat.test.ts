/**
 * A session behind a web chat, in real Chromium: a page built at test time from the AI SDK's own
 * `useChat` (unmodified, `resume: true`) against sessionChatHandler on node:http (127.0.0.1), a real
 * worker and the dev server. A streamed reply shows as it streams; an approval clicked runs the tool and
 * the turn goes on; a reload mid-reply resumes the stream and the reply shows exactly once; a retried
 * POST runs once; garbage bodies get a 400 naming the field. The fake model holds its stream at gates
 * the test releases, and the test waits on the gates and the page, never on a time.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { getSession, sessionChatHandler, toNodeHandler, type SessionChatHandler } from '@fabric-harness/sdk/client';
import { reply, say, type FakeAnthropicServer, type FakeStep } from '@fabric-harness/sdk/testing';
import { isTitleRequest, lastUserText, startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';
import { launchChromium } from './helpers/board-browser';

interface ChatServer {
  url: string;
  /** Every request the server answered: method, path, status. */
  log: Array<{ method: string; path: string; status: number }>;
  close(): Promise<void>;
}

/** The page (bundled now from test/fixtures/web-chat-page.js) and the handler, on loopback. */
async function serveChat(handler: SessionChatHandler): Promise<ChatServer> {
  const bundle = await build({
    entryPoints: [path.resolve(__dirname, '../fixtures/web-chat-page.js')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    write: false,
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]!.text;
  const html = '<!doctype html><meta charset="utf-8"><title>chat</title><div id="root"></div><script src="/app.js"></script>';
  const post = toNodeHandler(handler.POST);
  const get = toNodeHandler(handler.GET);
  const log: ChatServer['log'] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.on('finish', () => log.push({ method: req.method ?? '', path: url.pathname, status: res.statusCode }));
    if (req.method === 'POST' && url.pathname === '/api/chat') return void post(req, res);
    if (req.method === 'GET' && /^\/api\/chat\/[^/]+\/stream$/.test(url.pathname)) return void get(req, res);
    if (req.method === 'GET' && url.pathname === '/app.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    if (req.method === 'GET' && url.pathname === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('web chat (useChat against sessionChatHandler, in Chromium)', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let chat: ChatServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let n = 0;
  const chatId = (p: string) => `${p}-${process.pid}-${Date.now() % 100000}-${n++}`;

  beforeAll(async () => {
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'web-chat', baseURL: fake.url });
    // A chat id the app refuses gets the app's answer (a real app checks the caller here).
    const sessionIdFrom = (chatId: string) => (chatId.startsWith('forbidden-') ? new Response(JSON.stringify({ error: 'not yours' }), { status: 403 }) : chatId);
    chat = await serveChat(sessionChatHandler({ client: w.client, agent: 'gated-assistant', taskQueue: w.taskQueue, livePollMs: 50, sessionIdFrom }));
    browser = await launchChromium();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await chat?.close();
    await w?.stop();
    await fake?.stop();
  });

  /** The assistant message's text parts as the page shows them. */
  const texts = () => page.locator('.msg.assistant .text').allTextContents();

  it('streams a reply, runs a tool once its approval is clicked, and resumes after a reload without losing or repeating text', async () => {
    const id = chatId('webchat');
    const first = 'Let me deploy the web service for you.';
    // Model output is untrusted: markup in it must show as text.
    const final = 'The web service is deployed <img src=x onerror="window.__xss=1"> and answering on port 8080.';
    fake.enqueue(
      { ...reply({ content: [first, { name: 'deploy', input: { service: 'web' } }], stopReason: 'tool_use' }), stream: { chunkChars: 6, pauseAfterDeltas: 2, gate: 'wc-first' } } as FakeStep,
      say(final, { stream: { chunkChars: 5, pauseAfterDeltas: 4, gate: 'wc-final' } }),
    );
    const posts: string[] = [];
    page.on('request', (r) => void (r.method() === 'POST' && r.url().endsWith('/api/chat') && posts.push(r.postData() ?? '')));
    await page.goto(`${chat.url}/?chat=${id}`);
    await page.locator('#prompt').fill('Deploy the web service.');
    await page.locator('#send').click();

    // The model is held after two deltas: the page shows them, and not the rest.
    await fake.paused('wc-first');
    await until('the first deltas on the page', async () => ((await texts())[0] ?? '').startsWith('Let me'));
    expect((await texts())[0]).not.toBe(first);
    fake.release('wc-first');

    // The tool waits for approval: the page offers it; a click approves it and the turn goes on.
    const approve = page.locator('.tool[data-state="approval-requested"] .approve');
    await approve.waitFor({ timeout: 30_000 });
    expect(await texts()).toEqual([first]);
    await approve.click();
    await page.locator('.tool[data-state="output-available"] .output', { hasText: 'deployed web' }).waitFor({ timeout: 30_000 });

    // The answer streams and is held mid-reply: reload the page there.
    await fake.paused('wc-final');
    await until('the answer streaming on the page', async () => ((await texts())[1] ?? '').length > 0);
    const before = (await texts())[1]!;
    expect(final.startsWith(before) && before !== final).toBe(true);
    const resumes = () => chat.log.filter((r) => r.method === 'GET' && r.path === `/api/chat/${id}/stream` && r.status === 200).length;
    expect(resumes()).toBe(0);
    await page.reload();
    // After the reload useChat resumes the stream (GET …/stream): the whole turn so far, once.
    await until('the resumed answer on the page', async () => ((await texts())[1] ?? '').length >= before.length);
    expect(await texts()).toEqual([first, final.slice(0, (await texts())[1]!.length)]);
    expect(await page.locator('.tool[data-state="output-available"]').count()).toBe(1);
    fake.release('wc-final');
    await until('the whole answer on the page', async () => (await page.locator('#status').textContent()) === 'ready' && (await texts())[1] === final);
    // Exactly once: no lost text, no repeated text, and the session's reply is the same.
    expect(await texts()).toEqual([first, final]);
    const body = (await page.locator('main').textContent())!;
    expect(body.split(final).length - 1).toBe(1);
    expect(body.split(first).length - 1).toBe(1);
    expect(await page.locator('.msg.assistant').count()).toBe(1);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    await until('the resume request to finish', async () => resumes() >= 1);
    const session = getSession(w.client, id);
    const info = await session.info();
    expect(info.processing).toBe(false);
    const entries = await session.messages();
    const last = [...entries].reverse().find((e) => e.type === 'assistant') as { content: Array<{ type: string; text?: string }> };
    expect(last.content.filter((b) => b.type === 'text').map((b) => b.text)).toEqual([final]);

    // The approval's POST sent again (a retry, after the call ran): the same rest of the turn, nothing run twice.
    const answer = posts.find((p) => p.includes('approval-responded'))!;
    const asked = fake.messageRequests().length;
    const again = await fetch(`${chat.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: answer });
    expect(again.status).toBe(200);
    const chunks = (await again.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: string; output?: unknown });
    expect(chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta).join('')).toBe(final);
    expect(chunks.filter((c) => c.type === 'tool-output-available').map((c) => c.output)).toEqual(['deployed web']);
    expect(fake.messageRequests()).toHaveLength(asked);
    expect((await session.messages()).length).toBe(entries.length);
  }, 120_000);

  it('a retried POST (the same UI message) is one message: the model is asked once', async () => {
    const id = chatId('webchat-retry');
    fake.enqueue(say('Answered once.'));
    const body = JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: 'uiMsg1', role: 'user', parts: [{ type: 'text', text: 'Retry me.' }] }] });
    const send = async () => {
      const res = await fetch(`${chat.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
      const sse = await res.text();
      return sse
        .split('\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: string; messageId?: string });
    };
    const a = await send();
    const b = await send();
    const text = (chunks: typeof a) => chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta).join('');
    expect(text(a)).toBe('Answered once.');
    expect(text(b)).toBe('Answered once.');
    expect(b.find((c) => c.type === 'start')).toEqual(a.find((c) => c.type === 'start'));
    expect(fake.messageRequests().filter((r) => !isTitleRequest(r) && lastUserText(r) === 'Retry me.')).toHaveLength(1);
    // Nothing runs now: a resume has nothing to send.
    expect((await fetch(`${chat.url}/api/chat/${id}/stream`)).status).toBe(204);
  }, 60_000);

  it('a POST or a resume no worker answers (a message, an approval, where the turn is) ends (its bound, or the client going) with a 503 WAIT_ENDED; posted again once a worker comes, it runs once', async () => {
    const id = chatId('webchat-later');
    const queue = `${w.taskQueue}-later`;
    const handler = sessionChatHandler({ client: w.client, agent: 'gated-assistant', taskQueue: queue, livePollMs: 50, sendTimeoutMs: 1_500 });
    const body = JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: 'uiLater', role: 'user', parts: [{ type: 'text', text: 'Anyone there?' }] }] });
    const post = (signal?: AbortSignal) => handler.POST(new Request('http://127.0.0.1/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body, ...(signal ? { signal } : {}) }));
    // No worker polls the queue: the session starts, the message waits, the POST answers within its bound.
    let started = Date.now();
    const timedOut = await post();
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(timedOut.status).toBe(503);
    const error = ((await timedOut.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('WAIT_ENDED');
    expect(error.message).toContain(`no worker is polling task queue ${queue}`);
    // The client going ends the wait too, long before the bound.
    const slow = sessionChatHandler({ client: w.client, agent: 'gated-assistant', taskQueue: queue, livePollMs: 50, sendTimeoutMs: 600_000 });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 500);
    started = Date.now();
    const gone = await slow.POST(new Request('http://127.0.0.1/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: abort.signal }));
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('WAIT_ENDED');
    expect((await getSession(w.client, id).workflow.describe()).status.name).toBe('RUNNING');
    // A worker comes; the same message posted again streams its one answer. (Where a worker polls, the
    // default bound: a worker just started may take longer than 1.5 s to take a message on a busy machine.)
    const patient = sessionChatHandler({ client: w.client, agent: 'gated-assistant', taskQueue: queue, livePollMs: 50 });
    const later = await startTestWorker({ name: 'web-chat-later', baseURL: fake.url, taskQueue: queue });
    try {
      fake.enqueue(say('Here now.'));
      const res = await patient.POST(
        new Request('http://127.0.0.1/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
      );
      expect(res.status).toBe(200);
      const deltas = (await res.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: string });
      expect(deltas.filter((c) => c.type === 'text-delta').map((c) => c.delta).join('')).toBe('Here now.');
      expect(fake.messageRequests().filter((r) => !isTitleRequest(r) && lastUserText(r) === 'Anyone there?')).toHaveLength(1);
      expect((await getSession(w.client, id).info()).messageCount).toBe(1);
    } finally {
      await later.stop();
    }

    // An approval answered while no worker polls: the same bound, and the decision taken once a worker comes.
    const again = await startTestWorker({ name: 'web-chat-again', baseURL: fake.url, taskQueue: queue });
    let approvalBody: string;
    try {
      fake.enqueue(reply({ content: ['Deploying.', { name: 'deploy', input: { service: 'api' } }], stopReason: 'tool_use' }), say('Deployed api.'));
      const ask = JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: 'uiDeploy', role: 'user', parts: [{ type: 'text', text: 'Deploy the api.' }] }] });
      const res = await patient.POST(new Request('http://127.0.0.1/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask }));
      const request = (await res.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as { type: string; approvalId?: string; toolCallId?: string }).find((c) => c.type === 'tool-approval-request')!;
      expect(request).toBeDefined();
      approvalBody = JSON.stringify({
        id,
        trigger: 'submit-message',
        messages: [{ id: 'web-uiDeploy-reply', role: 'assistant', parts: [{ type: 'dynamic-tool', toolName: 'deploy', toolCallId: request.toolCallId, state: 'approval-responded', input: { service: 'api' }, approval: { id: request.approvalId, approved: true } }] }],
      });
    } finally {
      await again.stop();
    }
    // A resume meanwhile: its reads wait for a worker too, within the same bound, or until the client goes.
    started = Date.now();
    const resumed = await handler.GET(new Request(`http://127.0.0.1/api/chat/${id}/stream`));
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(resumed.status).toBe(503);
    expect(((await resumed.json()) as { error: { code: string } }).error.code).toBe('WAIT_ENDED');
    const left = new AbortController();
    setTimeout(() => left.abort(), 300);
    started = Date.now();
    const abandoned = await slow.GET(new Request(`http://127.0.0.1/api/chat/${id}/stream`, { signal: left.signal }));
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(abandoned.status).toBe(503);
    started = Date.now();
    const unanswered = await handler.POST(new Request('http://127.0.0.1/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: approvalBody }));
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(unanswered.status).toBe(503);
    // (Not "no worker is polling": Temporal lists a stopped worker's poller for a while after it goes.)
    expect(((await unanswered.json()) as { error: { code: string } }).error.code).toBe('WAIT_ENDED');
    expect((await getSession(w.client, id).workflow.describe()).status.name).toBe('RUNNING');
    const last = await startTestWorker({ name: 'web-chat-last', baseURL: fake.url, taskQueue: queue });
    try {
      const res = await patient.POST(new Request('http://127.0.0.1/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: approvalBody }));
      expect(res.status).toBe(200);
      const chunks = (await res.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: string; output?: unknown });
      expect(chunks.filter((c) => c.type === 'tool-output-available').map((c) => c.output)).toEqual(['deployed api']);
      expect(chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta).join('')).toBe('Deployed api.');
    } finally {
      await last.stop();
    }
  }, 120_000);

  it('answers garbage with a 400 naming the field, and goes on serving', async () => {
    const post = async (body: string) => {
      const res = await fetch(`${chat.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: res.status, body: (await res.json()) as { error: { code: string; field: string; message: string } } };
    };
    const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
    const cases: Array<[string, string]> = [
      ['not json at all', '(body)'],
      ['[]', '(body)'],
      [JSON.stringify({ messages: [user] }), 'id'],
      [JSON.stringify({ id: 'a-chat', messages: 'nope' }), 'messages'],
      [JSON.stringify({ id: 'a-chat', messages: [] }), 'messages'],
      [JSON.stringify({ id: 'a-chat', messages: [{ id: 'u1', role: 'robot', parts: [] }] }), 'messages.0.role'],
      [JSON.stringify({ id: 'Not A Session Id!', messages: [user] }), 'id'],
      [JSON.stringify({ id: 'a-chat', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'image' }] }] }), 'messages.0.parts'],
      [JSON.stringify({ id: 'a-chat', messages: [user], trigger: 'regenerate-message' }), 'trigger'],
      [JSON.stringify({ id: 'a-chat', messages: [{ id: 'x-reply', role: 'assistant', parts: [{ type: 'dynamic-tool', toolCallId: 't1', state: 'approval-responded', approval: { id: 'forged', approved: true } }] }] }), 'messages.0.parts'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect({ body, status: res.status, code: res.body.error.code, field: res.body.error.field }).toEqual({ body, status: 400, code: 'INVALID_INPUT', field });
    }
    expect((await fetch(`${chat.url}/api/chat/no-such-chat/stream`)).status).toBe(204);
    // sessionIdFrom's refusal is the answer, for a send and a resume alike; no session is started.
    expect((await post(JSON.stringify({ id: 'forbidden-chat', messages: [user] }))).status).toBe(403);
    expect((await fetch(`${chat.url}/api/chat/forbidden-chat/stream`)).status).toBe(403);
    expect(await getSession(w.client, 'forbidden-chat').info().catch((e: { code?: string }) => e.code)).toBe('SESSION_NOT_FOUND');
    // A handler built with a poll interval that is not a positive number is refused as it is built, not at its first request.
    for (const sendTimeoutMs of [0, -5, '30s'] as const) {
      expect(() => sessionChatHandler({ client: w.client, agent: 'gated-assistant', taskQueue: w.taskQueue, sendTimeoutMs: sendTimeoutMs as never })).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT', field: 'sendTimeoutMs' }),
      );
    }
    for (const livePollMs of [0, -1, '50'] as const) {
      expect(() => sessionChatHandler({ client: w.client, agent: 'gated-assistant', taskQueue: w.taskQueue, livePollMs: livePollMs as never })).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT', field: 'livePollMs' }),
      );
    }
  });
});
