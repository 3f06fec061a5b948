/**
 * A prompt racing a manual reset is never lost and never cut in half, in both orders, each forced by
 * holding one model call at a proxy: a turn running when the reset arrives finishes first and is in the
 * conversation the reset stores and summarises; a prompt arriving while the reset stores and summarises
 * waits in the queue (no turn starts meanwhile) and runs on the fresh conversation, which keeps it.
 */
import { startSession, type SessionHandle } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { ladderSession } from '../fixtures/ladder-agents';
import { startDelayProxy, type DelayProxy } from '../support/delay-proxy';
import { isTitleRequest, SCRIPTED_TITLE } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';

const MARKER = '[fabric-harness:summarize]';
const TRANSFER = '## Outcome\n- TRANSFER-NOTE: the user asked things';
const isSummary = (r: RecordedRequest) => String(r.body?.system ?? '').startsWith(MARKER);
const isTransfer = (r: RecordedRequest) => isSummary(r) && String(r.body.system).includes('hand-over note');
const isTurn = (r: RecordedRequest) => r.path === '/v1/messages' && !isSummary(r) && !isTitleRequest(r);
const body = (r: RecordedRequest) => JSON.stringify(r.body.messages);
/** Long enough for the other call to reach the session while this one is held; released at once on stop. */
const HOLD_MS = 8_000;

describe('a prompt racing a session reset', () => {
  let fake: FakeAnthropicServer;
  let proxy: DelayProxy;
  let w: TestWorker;
  let n = 0;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start({
      route: (req) => (isTitleRequest(req) ? say(SCRIPTED_TITLE) : isTransfer(req) ? say(TRANSFER) : undefined),
    });
    proxy = await startDelayProxy(fake.url);
    w = await startTestWorker({ name: 'reset-race', baseURL: proxy.url });
  });
  afterAll(async () => {
    await w?.stop();
    await proxy?.stop();
    await fake?.stop();
  });

  /** A session with one answered prompt and its title settled (so the next model call is the one we hold). */
  async function warmSession(): Promise<SessionHandle> {
    const s = await startSession(w.client, ladderSession, { id: `reset-race-${process.pid}-${Date.now()}-${n++}`, taskQueue: w.taskQueue });
    fake.enqueue(say('ok'));
    expect(await s.prompt('first prompt')).toBe('ok');
    await until('the title', async () => (await s.info()).title);
    return s;
  }

  it('a turn running when the reset arrives finishes first, and the reset stores and summarises it', async () => {
    const s = await warmSession();
    const from = fake.requests.length;
    proxy.delayNext(HOLD_MS);
    fake.enqueue(say('the racing reply'));
    const racing = s.prompt('sent before the reset', { messageId: 'racer' });
    await proxy.held(); // the racing turn's model call is in flight
    expect((await s.info()).current).toBe('racer');
    const reset = await s.reset();
    expect(await racing).toBe('the racing reply');
    // Stored and summarised after the turn: the first prompt and the racing one, each with its answer.
    expect(reset.entriesBefore).toBe(4);
    expect(reset.previousTranscript?.count).toBe(4);
    const since = fake.requests.slice(from);
    const turn = since.findIndex((r) => isTurn(r) && body(r).includes('sent before the reset'));
    const transfer = since.findIndex(isTransfer);
    expect(turn).toBeGreaterThanOrEqual(0);
    expect(transfer).toBeGreaterThan(turn);
    expect(body(since[transfer]!)).toContain('sent before the reset');
    await s.end();
  });

  it('a prompt arriving while the reset runs waits in the queue, then runs on the fresh conversation, which keeps it', async () => {
    const s = await warmSession();
    const from = fake.requests.length;
    proxy.delayNext(HOLD_MS);
    const resetting = s.reset();
    await proxy.held(); // the reset's transfer summary call is in flight
    fake.enqueue(say('the racing reply'), say('still here'));
    const racing = s.prompt('sent during the reset', { messageId: 'racer' });
    const seen = await until('the prompt to reach the session', async () => {
      const i = await s.info();
      return i.queued.some((m) => m.id === 'racer') || i.current === 'racer' ? i : undefined;
    });
    expect(proxy.isHolding()).toBe(true); // the reset is still summarising
    expect({ current: seen.current, queued: seen.queued.map((m) => m.id) }).toEqual({ current: undefined, queued: ['racer'] });
    const reset = await resetting;
    expect(await racing).toBe('the racing reply');
    expect(reset.entriesBefore).toBe(2);
    expect(reset.previousTranscript?.count).toBe(2);
    const since = fake.requests.slice(from);
    const transfer = since.findIndex(isTransfer);
    const turn = since.findIndex((r) => isTurn(r) && body(r).includes('sent during the reset'));
    expect(body(since[transfer]!)).not.toContain('sent during the reset');
    expect(turn).toBeGreaterThan(transfer);
    expect(body(since[turn]!)).toContain('TRANSFER-NOTE');
    // Kept: the next turn still has it.
    expect(await s.prompt('and now?')).toBe('still here');
    const last = fake.requests.filter(isTurn).at(-1)!;
    expect(body(last)).toContain('sent during the reset');
    expect(body(last)).toContain('TRANSFER-NOTE');
    await s.end();
  });
});
