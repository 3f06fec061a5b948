import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { startSessionFake } from './session-fake';
import { testConnection, type TestConnection } from './temporal';

/** Starts test/support/worker-process.ts in a child process; resolves once it polls. */
export function startWorkerProcess(env: {
  taskQueue: string;
  fakeUrl: string;
  storeDir: string;
  identity?: string;
  mcpCounter?: string;
  /** Activities of this type never finish on this worker (a hung store); it writes `signal` when one starts. */
  hangIn?: { activity: string; signal: string };
  /** Named model connections the worker has besides `anthropic` (to FH_FAKE_URL). */
  connections?: Record<string, unknown>;
  /** A Temporal server of the test's own (namespace `default`), instead of the run's dev server. */
  address?: string;
}): Promise<ChildProcess> {
  return startTsProcess(path.join(__dirname, 'worker-process.ts'), {
    ...(env.address ? { FH_TEST_TEMPORAL_ADDRESS: env.address, FH_TEST_TEMPORAL_NAMESPACE: 'default' } : {}),
    FH_TASK_QUEUE: env.taskQueue,
    FH_FAKE_URL: env.fakeUrl,
    FH_STORE_DIR: env.storeDir,
    ...(env.identity ? { FH_WORKER_IDENTITY: env.identity } : {}),
    ...(env.mcpCounter ? { FH_MCP_COUNTER: env.mcpCounter } : {}),
    ...(env.connections ? { FH_CONNECTIONS: JSON.stringify(env.connections) } : {}),
    ...(env.hangIn ? { FH_HANG_IN_ACTIVITY: env.hangIn.activity, FH_HANG_SIGNAL: env.hangIn.signal } : {}),
  });
}

/** Runs a TypeScript worker script in a child process with `env` added; resolves once it prints worker-ready. */
export function startTsProcess(script: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-r', path.join(__dirname, 'swc-register.js'), script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('worker-ready')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`worker process exited with ${code} before it was ready:\n${stderr}`)));
  });
}

export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * A describe's worker processes (each SIGKILLable) against the run's dev server, with the session fake
 * they share; registers its own beforeAll / afterAll (killing every process it started). Read `t` and
 * `fake` inside tests, after beforeAll ran.
 */
export function killableWorkers(): {
  readonly t: TestConnection;
  readonly fake: FakeAnthropicServer;
  start(env: Parameters<typeof startWorkerProcess>[0]): Promise<ChildProcess>;
} {
  let t: TestConnection | undefined;
  let fake: FakeAnthropicServer | undefined;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    t = await testConnection();
    fake = await startSessionFake();
  });
  afterAll(async () => {
    await Promise.all(children.map(killHard));
    await fake?.stop();
    await t?.close();
  });
  return {
    get t() {
      return t!;
    },
    get fake() {
      return fake!;
    },
    start: async (env) => {
      const child = await startWorkerProcess(env);
      children.push(child);
      return child;
    },
  };
}
