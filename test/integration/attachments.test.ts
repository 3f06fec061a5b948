/**
 * Attachments on the dev server: an image and a PDF sent with a prompt reach the model as Anthropic's
 * image and document blocks (checked by the fake as the API checks them), history holds only their
 * references, a worker SIGKILLed mid-turn loses neither, and an oversized or unsupported attachment is
 * refused with its named error before anything is queued, the session going on.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { sendPrompt, shareSession, startSession, type SessionHandle } from '@fabric-harness/sdk/client';
import { auditTranscript } from '@fabric-harness/sdk/audit';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { callTools, fail, FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { sessionPromptUpdate } from '../../src/wire/session-messages';
import { assistant } from '../fixtures/session-agents';
import { isTitleRequest, SCRIPTED_TITLE, startSessionFake } from '../support/session-fake';
import { ladderSession } from '../fixtures/ladder-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { killableWorkers, killHard } from '../support/worker-process-control';
import { rejection, until } from '../support/waiting';

const sid = (p: string) => `${p}-${process.pid}-${Date.now() % 1_000_000}`;

/** A 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
/** A two-page PDF (the objects the page count reads). */
const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [3 0 R 4 0 R] /Count 2>> endobj\n' +
    '3 0 obj <</Type /Page /Parent 2 0 R>> endobj\n4 0 obj <</Type /Page /Parent 2 0 R>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n',
  'latin1',
);

type Block = { type: string; text?: string; source?: { type: string; media_type: string; data: string }; title?: string };

/** The image and document blocks of a model request's last user message. */
function mediaBlocks(req: RecordedRequest): Block[] {
  const msgs = req.body.messages as Array<{ role: string; content: Block[] }>;
  return msgs.filter((m) => m.role === 'user').flatMap((m) => m.content.filter((b) => b.type === 'image' || b.type === 'document'));
}

const turnRequests = (fake: FakeAnthropicServer) => fake.requests.filter((r) => r.path === '/v1/messages' && !isTitleRequest(r));

const { EventType } = temporal.api.enums.v1;
/** How many workflow tasks a run gets depends on timing (a prompt arriving during a task, or after it), not on what it holds. */
const WORKFLOW_TASK_EVENTS = new Set([
  EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
  EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
]);

/** The session's history as the bytes Temporal keeps (`text`: all of it) and its size without the workflow-task events (`size`: what the run holds). */
async function historyBytes(s: SessionHandle): Promise<{ size: number; text: string }> {
  const history = await s.workflow.fetchHistory();
  const bytes = temporal.api.history.v1.History.encode(history).finish();
  const held = (history.events ?? []).filter((e) => !WORKFLOW_TASK_EVENTS.has(e.eventType as temporal.api.enums.v1.EventType));
  return { size: temporal.api.history.v1.History.encode({ events: held }).finish().length, text: Buffer.from(bytes).toString('latin1') };
}

describe('attachments through a worker process that is SIGKILLed mid-turn', () => {
  const workers = killableWorkers();

  it('an image and a PDF reach the model as its blocks before and after the kill', async () => {
    const taskQueue = sid('attach-kill');
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-'));
    const cwd = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-cwd-'));
    const pngPath = path.join(cwd, 'failing-page.png');
    await fs.writeFile(pngPath, PNG);
    const { t, fake } = workers;
    const first = await workers.start({ taskQueue, fakeUrl: fake.url, storeDir });
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const s = await startSession(client, assistant, { id: sid('attach'), taskQueue, settings: { permissionMode: 'ask', workingDirectory: cwd } });
    const before = turnRequests(fake).length;
    fake.enqueue(callTools({ name: 'write_file', input: { path: 'notes.txt', content: 'red square; 2 pages' } }), say('a red square and a two-page spec'));
    const reply = s.prompt('what is in these?', { attachments: [{ path: pngPath }, { bytes: PDF, mediaType: 'application/pdf', name: 'spec.pdf' }] });
    const pending = await until('the approval', async () => (await s.pendingApprovals())[0]);

    const expected = [
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF.toString('base64') }, title: 'spec.pdf' },
    ];
    expect(mediaBlocks(turnRequests(fake)[before]!)).toEqual(expected);

    // Mid-turn (the call waits for approval): the worker dies; a new one finishes the turn from the store.
    await killHard(first);
    await workers.start({ taskQueue, fakeUrl: fake.url, storeDir });
    await s.approve(pending.callId);
    expect(await reply).toBe('a red square and a two-page spec');
    const after = turnRequests(fake)[before + 1]!;
    expect(mediaBlocks(after)).toEqual(expected);

    // The conversation keeps references only.
    const user = (await s.messages()).find((m) => m.type === 'user') as { attachments?: unknown[] };
    expect(user.attachments).toEqual([
      { name: 'failing-page.png', mediaType: 'image/png', hash: expect.stringMatching(/^[0-9a-f]{64}$/), size: PNG.length },
      { name: 'spec.pdf', mediaType: 'application/pdf', hash: expect.stringMatching(/^[0-9a-f]{64}$/), size: PDF.length },
    ]);
    const history = await historyBytes(s);
    expect(history.text).not.toContain(PDF.toString('base64').slice(0, 40));
    expect(history.text).not.toContain('%PDF-1.4');
    await s.end();
  }, 120_000);
});

describe('attachments on an in-process worker', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'attachments', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('history holds references only: under 300 bytes per attachment', async () => {
    const plain = await startSession(w.client, assistant, { id: sid('attach-zero'), taskQueue: w.taskQueue });
    const attached = await startSession(w.client, assistant, { id: sid('attach-twos'), taskQueue: w.taskQueue });
    fake.enqueue(say('seen'));
    await plain.prompt('look at this', { messageId: 'm-1' });
    fake.enqueue(say('seen'));
    await attached.prompt('look at this', {
      messageId: 'm-1',
      attachments: [
        { bytes: PNG, mediaType: 'image/png', name: 'a.png' },
        { bytes: PDF, mediaType: 'application/pdf', name: 'b.pdf' },
      ],
    });
    const a = await historyBytes(attached);
    const p = await historyBytes(plain);
    // Equal ids and texts: the histories differ by the two references alone.
    const perAttachment = (a.size - p.size) / 2;
    process.stdout.write(`history bytes per attachment: ${perAttachment}\n`);
    expect(perAttachment).toBeGreaterThan(0);
    expect(perAttachment).toBeLessThan(300);
    expect(a.text).not.toContain(PNG.toString('base64').slice(0, 40));
    expect(a.text).not.toContain('%PDF-1.4');

    // The audit (from history alone) names the files; the share page draws the image as an image.
    const { markdown } = await auditTranscript(await attached.workflow.fetchHistory());
    expect(markdown).toContain('- Attachment: `"a.png"` (image/png, 70 bytes, sha256 ');
    expect(markdown).toContain('- Attachment: `"b.pdf"` (application/pdf, ');
    const { html } = await shareSession(w.client, attached.id);
    expect(html).toContain(`<img alt="a.png" src="data:image/png;base64,${PNG.toString('base64')}">`);
    expect(html).toContain('Attachment: b.pdf (application/pdf, ');
    expect(html).not.toContain('data:application/pdf');
    await plain.end();
    await attached.end();
  });

  it('refuses an oversized or unsupported attachment with a named error before anything is queued; the session goes on', async () => {
    const s = await startSession(w.client, assistant, { id: sid('attach-refused'), taskQueue: w.taskQueue });
    const requests = fake.requests.length;
    const big = Buffer.alloc(4 * 1024 * 1024);
    PNG.copy(big);
    const tooLarge = await rejection(s.prompt('too big', { attachments: [{ bytes: big, mediaType: 'image/png', name: 'big.png' }] }));
    expect(tooLarge.code).toBe('ATTACHMENT_TOO_LARGE');
    expect(tooLarge.message).toContain('attachments.0.size');
    const unsupported = await rejection(s.prompt('a bitmap', { attachments: [{ bytes: PNG, mediaType: 'image/bmp', name: 'a.bmp' }] }));
    expect(unsupported.code).toBe('ATTACHMENT_UNSUPPORTED_TYPE');
    expect(unsupported.message).toContain('attachments.0.mediaType');
    // Bytes that are not of the type named: the provider would refuse them, so the client does first.
    const mislabelled = await rejection(s.prompt('a fake jpeg', { attachments: [{ bytes: PNG, mediaType: 'image/jpeg', name: 'a.jpg' }] }));
    expect(mislabelled.code).toBe('ATTACHMENT_UNSUPPORTED_TYPE');
    // A client that skips the checks meets the session's validator: refused, nothing queued.
    const raw = await rejection(
      s.workflow.executeUpdate(sessionPromptUpdate as never, { args: [{ text: 'raw', attachments: [{ name: 'x.bmp', mediaType: 'image/bmp', hash: 'a'.repeat(64), size: 10 }] }] }),
    );
    expect(JSON.stringify(raw.cause ?? raw)).toContain('ATTACHMENT_UNSUPPORTED_TYPE');
    expect((await s.info()).messageCount).toBe(0);
    expect(fake.requests.length).toBe(requests);

    fake.enqueue(say('still here'));
    expect(await s.prompt('are you there?')).toBe('still here');
    expect((await s.info()).messageCount).toBe(1);
    await s.end();
  });

  it('sendPrompt (start and prompt in one round trip) takes attachments too', async () => {
    const before = fake.requests.length;
    fake.enqueue(say('one pixel'));
    const { session, reply } = await sendPrompt(w.client, assistant, 'what is this?', {
      id: sid('attach-start'),
      taskQueue: w.taskQueue,
      attachments: [{ bytes: PNG, mediaType: 'image/png', name: 'p.png' }],
    });
    expect(reply).toBe('one pixel');
    const sent = fake.requests.slice(before).find((r) => r.path === '/v1/messages' && !isTitleRequest(r))!;
    expect(mediaBlocks(sent)).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } }]);
    await session.end();
  });
});

describe('an overflow resends the running prompt with its attachments', () => {
  const FINAL = 'ATTACHED-FINAL what is on this screenshot?';
  const isSummary = (r: RecordedRequest) => String(r.body?.system ?? '').startsWith('[fabric-harness:summarize]');
  const isTurn = (r: RecordedRequest) => r.path === '/v1/messages' && !isSummary(r) && !isTitleRequest(r);
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({
      route: (req) => {
        if (isTitleRequest(req)) return say(SCRIPTED_TITLE);
        if (isSummary(req)) return say('## Outcome\n- TRANSFER-NOTE: the user warmed up');
        // The prompt with the file does not fit until the conversation was reset to its transfer note.
        const body = JSON.stringify(req.body.messages);
        return body.includes('ATTACHED-FINAL') && !body.includes('TRANSFER-NOTE') ? fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' }) : undefined;
      },
    });
    w = await startTestWorker({ name: 'attach-ladder', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('the reset carries the prompt with its image to the retried call', async () => {
    const s = await startSession(w.client, ladderSession, { id: sid('attach-ladder'), taskQueue: w.taskQueue });
    fake.enqueue(say('warmed up'));
    await s.prompt('warm up first');
    fake.enqueue(say('answered after the reset'));
    const before = fake.requests.length;
    expect(await s.prompt(FINAL, { attachments: [{ bytes: PNG, mediaType: 'image/png', name: 'screen.png' }] })).toBe('answered after the reset');
    const finals = fake.requests.slice(before).filter((r) => isTurn(r) && JSON.stringify(r.body.messages).includes('ATTACHED-FINAL'));
    const last = finals.at(-1)!;
    expect(finals.length).toBeGreaterThan(1); // refused, then resent after the ladder's steps
    expect(JSON.stringify(last.body.messages)).toContain('TRANSFER-NOTE');
    expect(mediaBlocks(last)).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } }]);
    await s.end();
  });
});
