/**
 * `startDevServer` from @fabric-harness/sdk/testing, the public helper users start a Temporal dev server
 * with (tests, `fh server`): it serves the namespace and the custom search attributes it was asked for,
 * persists to `dbFilename` across restarts, sets the dynamic config values asked for, refuses a port in use
 * with a typed error naming it, and `stop()` stops the server. (This replaces a test of the integration
 * suite's own global setup.)
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { getFreePort, startDevServer, TemporalCliError, type DevServer } from '@fabric-harness/sdk/testing';
import { FH_SEARCH_ATTRIBUTES } from '@fabric-harness/sdk/client';

async function listed(client: Client, query: string): Promise<string[]> {
  for (let i = 0; i < 75; i++) {
    const found: string[] = [];
    for await (const wf of client.workflow.list({ query })) found.push(`${wf.workflowId}:${wf.status.name}`);
    if (found.length > 0) return found;
    await new Promise((r) => setTimeout(r, 200));
  }
  return [];
}

function accepts(address: string): Promise<boolean> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describe('startDevServer (public testing API)', () => {
  let dir: string;
  const servers: DevServer[] = [];
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-devserver-'));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('serves the namespace and search attributes asked for, persists to dbFilename across a restart, and stops', async () => {
    const namespace = `fh-devserver-${process.pid}`;
    const dbFilename = path.join(dir, 'temporal.db');
    const opts = { namespace, dbFilename, searchAttributes: { FhProbeLabel: 'Keyword' as const } };
    const first = await startDevServer(opts);
    servers.push(first);
    expect(first.namespace).toBe(namespace);
    const connection = await Connection.connect({ address: first.address });
    const client = new Client({ connection, namespace });
    const attrs = await connection.operatorService.listSearchAttributes({ namespace });
    expect(Object.keys(attrs.customAttributes ?? {})).toContain('FhProbeLabel');
    // The harness's own too, without being asked: a session needs them to start.
    expect(Object.keys(attrs.customAttributes ?? {})).toEqual(expect.arrayContaining(Object.keys(FH_SEARCH_ATTRIBUTES)));
    const workflowId = `probe-${randomUUID()}`;
    // No worker polls this task queue: the run stays RUNNING, in the database, across the restart.
    await client.workflow.start('fhProbe', { taskQueue: `probe-${randomUUID()}`, workflowId, args: [] });
    expect(await listed(client, `WorkflowId = '${workflowId}'`)).toEqual([`${workflowId}:RUNNING`]);
    await connection.close();
    await first.stop();
    expect(await accepts(first.address)).toBe(false);

    const second = await startDevServer(opts);
    servers.push(second);
    const again = await Connection.connect({ address: second.address });
    try {
      const described = await new Client({ connection: again, namespace }).workflow.getHandle(workflowId).describe();
      expect(described.status.name).toBe('RUNNING');
    } finally {
      await again.close();
    }
  }, 120_000);

  it('sets the dynamic config values asked for over its defaults: a closed run is deleted in seconds', async () => {
    const server = await startDevServer({ dynamicConfig: { 'limit.maxIDLength': 40 } });
    servers.push(server);
    const connection = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection, namespace: server.namespace });
      // The limit holds for task queue names too: this one is short.
      const start = (workflowId: string) => client.workflow.start('fhProbe', { taskQueue: 'probe', workflowId, args: [] });
      // Over the server's limit of 40 (its default is 1,000; a request ID, a UUID, is 36): refused by the server.
      const refused = await start(`probe-${'x'.repeat(50)}`).then(() => undefined, (e: unknown) => e as Error);
      expect(`${refused?.message}: ${(refused?.cause as Error | undefined)?.message}`).toMatch(/WorkflowId length exceeds limit/);
      const ok = await start('probe-short').then(() => 'started', (e: unknown) => `${(e as Error).message}: ${((e as Error).cause as Error | undefined)?.message}`);
      expect(ok).toBe('started');
      // The default beside the value asked for (DEV_SERVER_DYNAMIC_CONFIG): the server acknowledges a run's
      // close every second, and deletes a closed run once it is acknowledged. At its own default (30 s) this
      // run stays about 34 s.
      const handle = client.workflow.getHandle('probe-short');
      await handle.terminate('closed, to be deleted');
      const describedRunId = (await handle.describe()).runId;
      await client.workflowService.deleteWorkflowExecution({ namespace: server.namespace, workflowExecution: { workflowId: 'probe-short', runId: describedRunId } });
      const deleted = Date.now();
      let gone = false;
      while (!gone && Date.now() - deleted < 15_000) {
        gone = await handle.describe().then(() => false, (e: unknown) => e instanceof WorkflowNotFoundError);
        if (!gone) await new Promise((r) => setTimeout(r, 250));
      }
      expect({ gone, waitedUnder15s: Date.now() - deleted < 15_000 }).toEqual({ gone: true, waitedUnder15s: true });
    } finally {
      await connection.close();
    }
  }, 120_000);

  // Refused before anything starts: a key with `=` in it made the CLI fail 5 s later (TemporalDevServerStartFailed).
  it('refuses a dynamic config entry it cannot pass on, at once, naming it', async () => {
    for (const [dynamicConfig, named] of [
      [{ 'a=b': 1 }, /dynamicConfig\["a=b"\] is not a dynamic config key/],
      [{ 'limit.maxIDLength': Number.NaN }, /dynamicConfig\["limit.maxIDLength"\] must be a string, a finite number or a boolean/],
    ] as const) {
      const err = await startDevServer({ dynamicConfig }).then((s) => (servers.push(s), undefined), (e: unknown) => e);
      expect(err).toBeInstanceOf(TemporalCliError);
      expect(err).toMatchObject({ code: 'TemporalDevServerOptionInvalid', message: expect.stringMatching(named) });
    }
  });

  // What broke `fh demo` once in CI: the port chosen for the frontend was taken (here by an outgoing
  // connection's local end, as the OS hands them out) before the server bound it, and the server never came up.
  it('a port it chose taken before the server bound it: starts again on another, and says so', async () => {
    const peer = net.createServer();
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
    const socket = net.connect((peer.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    const taken = socket.localPort!;
    const picks: number[] = [];
    const progress: string[] = [];
    try {
      const server = await startDevServer({ onProgress: (l) => progress.push(l) }, async () => {
        const port = picks.length === 0 ? taken : await getFreePort();
        picks.push(port);
        return port;
      });
      servers.push(server);
      expect(picks).toHaveLength(2);
      expect(server.address).toBe(`127.0.0.1:${picks[1]}`);
      expect(progress.filter((l) => l.includes(`did not answer on 127.0.0.1:${taken}`))).toHaveLength(1);
      const connection = await Connection.connect({ address: server.address });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
    } finally {
      socket.destroy();
      peer.close();
    }
  }, 60_000);

  it('refuses a port in use with TemporalDevServerPortInUse naming the port', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const err = await startDevServer({ port }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(TemporalCliError);
      expect(err).toMatchObject({ code: 'TemporalDevServerPortInUse', message: expect.stringContaining(`Port ${port}`) });
    } finally {
      blocker.close();
    }
  });
});
