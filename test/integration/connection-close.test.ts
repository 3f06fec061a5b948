/**
 * Closing a client's connection right after a public call, or while result() waits, is safe: no
 * uncaught "Channel has been shut down" from @temporalio/client's retry timer (a call made in the same
 * tick as the close used to be ended UNAVAILABLE by gRPC and retried on the closed channel), and the
 * waiting result() rejects with CONNECTION_CLOSED at once instead of hanging 20 s on its long poll and
 * failing with a bare "Unexpected error while making gRPC request".
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
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
