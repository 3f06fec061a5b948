/**
 * Closing a client's connection right after a public call, or while result() waits, is safe: no
 * uncaught "Channel has been shut down" from @temporalio/client's retry timer (a call made in the same
 * tick as the close used to be ended UNAVAILABLE by gRPC and retried on the closed channel), and the
 * waiting result() rejects with CONNECTION_CLOSED at once instead of hanging 20 s on its long poll and
 * failing with a bare "Unexpected error while making gRPC request".
 */
import { spawn } from 'node:child_process';
import { getEventListeners } from 'node:events';
import * as os from 'node:os';
import * as path from 'node:path';
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { untilClosed } from '../../src/client/connection-close';
import { calculator } from '../fixtures/agents';
import { ensureBuilt } from '../support/fh-cli';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const ROOT = path.resolve(__dirname, '../..');
const ROUNDS = 8;

describe('closing the connection after a call', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    ensureBuilt();
    fake = await FakeAnthropicServer.start({ route: () => say('ok') });
    w = await startTestWorker({ name: 'close-after', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('a process that closes right after prompt, compact, entries, close and while result() waits exits cleanly', async () => {
    const idleQueue = `nobody-${process.pid}-${Date.now()}`;
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'test/fixtures/close-after-calls.js'), w.t.address, w.t.namespace, w.taskQueue, idleQueue, String(ROUNDS)],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const each = { ok: ROUNDS };
    expect(JSON.parse(stdout)).toEqual({
      prompt: each,
      compact: each,
      entries: each,
      close: each,
      result: each,
      'pending result': { CONNECTION_CLOSED: ROUNDS },
      'result waiting a while': { CONNECTION_CLOSED: ROUNDS },
    });
  }, 180_000);
});

describe('a long wait on result()', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;

  beforeAll(async () => {
    // A reply that takes about 2 s: the wait outlives several renewals of its signal.
    fake = await FakeAnthropicServer.start({ route: () => say('The sum is 4, written.'), stream: { chunkChars: 1, delayMs: 90 } });
    w = await startTestWorker({ name: 'long-wait', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  it('is asked again on a fresh signal now and then, so abort listeners do not pile up on one (the connection never removes them)', async () => {
    const handle = await startAgent(w.client, calculator, { task: 'add 2 and 2', dir: os.tmpdir() }, { workflowId: `long-wait-${Date.now()}`, taskQueue: w.taskQueue });
    const signals: AbortSignal[] = [];
    const withAbortSignal = w.client.withAbortSignal.bind(w.client);
    const client = Object.create(w.client, {
      withAbortSignal: { value: <R>(signal: AbortSignal, fn: () => Promise<R>) => (signals.push(signal), withAbortSignal(signal, fn)) },
    }) as typeof w.client;
    const result = await untilClosed(client, handle.workflowId, () => handle.workflow.result() as Promise<{ reply: string }>, 300);
    expect(result.reply).toBe('The sum is 4, written.');
    // Renewed several times, each signal ended (aborted) but the last, and none kept more than a call or two's listeners.
    expect(signals.length).toBeGreaterThan(2);
    expect(signals.slice(0, -1).every((s) => s.aborted)).toBe(true);
    expect(Math.max(...signals.map((s) => getEventListeners(s, 'abort').length))).toBeLessThanOrEqual(3);
  });
});
