/**
 * `fh session prompt` when the server goes away mid-wait (the built binary, against a dev server of this
 * test's own so it can be stopped and started again on the same database): the error names the message id,
 * and the command it prints gets the message's answer once the server is back, without running it twice.
 */
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startSession } from '@fabric-harness/sdk/client';
import { FabricHarnessPlugin, FileTranscriptStore } from '@fabric-harness/sdk/worker';
import { say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { getFreePort, startDevServer, type DevServer } from '../../src/testing/temporal-cli';
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { ensureBuilt, runFh } from '../support/fh-cli';
import { isTitleRequest, lastUserText, startSessionFake } from '../support/session-fake';
import { killHard, startWorkerProcess } from '../support/worker-process-control';
import { until } from '../support/waiting';

describe('fh session prompt when the server goes away', () => {
  let server: DevServer | undefined;
  let fake: FakeAnthropicServer;
  let worker: ChildProcess | undefined;
  let connection: Connection | undefined;

  afterAll(async () => {
    if (worker) await killHard(worker);
    await connection?.close().catch(() => undefined);
    await server?.stop();
    await fake?.stop();
  });

  it('names the message id, and the command it prints gets the answer once, after the server is back', async () => {
    ensureBuilt();
    const db = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-reattach-db-')), 'temporal.db');
    const port = await getFreePort();
    server = await startDevServer({ port, dbFilename: db, searchAttributes: { ...FH_SEARCH_ATTRIBUTES } });
    fake = await startSessionFake();
    // The answer streams one delta, then waits at a gate until the test lets it go: the turn is in flight.
    fake.enqueue(say('The answer, in one piece.', { stream: { chunkChars: 4, pauseAfterDeltas: 1, gate: 'reattach' } }));
    const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-reattach-store-'));
    const taskQueue = `reattach-${process.pid}`;
    const startWorker = () =>
      startWorkerProcess({ address: server!.address, taskQueue, fakeUrl: fake.url, storeDir }).then((c) => (worker = c));
    await startWorker();
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: 'default', plugins: [new FabricHarnessPlugin({ store: new FileTranscriptStore(storeDir) })] });
    const session = await startSession(client, 'assistant', { taskQueue });
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default', FH_STORE_DIR: storeDir, NO_COLOR: '1' };

    // The prompt is accepted and its turn is in flight (held at the gate) when the server goes away.
    const prompting = runFh(['session', 'prompt', session.id, 'What', 'is', 'the', 'answer?'], env, { timeoutMs: 120_000 });
    await fake.paused('reattach');
    await server.stop();
    const cut = await prompting;
    expect(cut.code).not.toBe(0);
    const named = /Message (\S+) may already be in session (\S+)/.exec(cut.stderr);
    expect(named?.[2]).toBe(session.id);
    const messageId = named![1]!;
    expect(cut.stderr).toContain(`fh session prompt ${session.id} --message-id ${messageId}`);
    expect(cut.stderr.trim().split('\n')).toHaveLength(1);

    // The server is back on the same database; the worker process reconnects (or a new one starts).
    server = await startDevServer({ port, dbFilename: db, searchAttributes: { ...FH_SEARCH_ATTRIBUTES } });
    await killHard(worker!);
    // The model call in flight died with its worker: its retry on the new worker asks the model again.
    fake.enqueue(say('The answer, in one piece.'));
    await startWorker();
    fake.release('reattach');
    const again = await runFh(['session', 'prompt', session.id, '--message-id', messageId, 'What', 'is', 'the', 'answer?'], env, { timeoutMs: 120_000 });
    expect({ code: again.code, stdout: again.stdout, stderr: again.stderr }).toEqual({ code: 0, stdout: 'The answer, in one piece.\n', stderr: '' });
    // One message, one turn: the model saw the question in one turn only (a retried call re-sends the same turn).
    const turns = new Set(fake.messageRequests().filter((r) => !isTitleRequest(r) && lastUserText(r) === 'What is the answer?').map((r) => JSON.stringify(r.body.messages.length)));
    expect([...turns]).toEqual([JSON.stringify(1)]);
    const info = await until('the session to count its message', async () => {
      const i = await session.info();
      return i.messageCount === 1 ? i : undefined;
    }, 30_000);
    expect(info.messageCount).toBe(1);
  }, 240_000);
});
