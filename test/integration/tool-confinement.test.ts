/**
 * bash on a worker is confined by default (bubblewrap, src/activities/tools/sandbox/sandbox.ts): a prompt-injected model
 * that runs `cat ../secret` reads nothing outside its sandbox directory, writes nothing outside it, reaches
 * no network, sees none of the worker's files ($HOME, the project tree) or environment, and a cancelled run
 * leaves none of its processes behind.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { workbench } from '../fixtures/payload-agents';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const SECRET = `outside-secret-${process.pid}-${Date.now()}`;

describe('bash on a worker is confined to its sandbox directory', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let base: string;
  let root: string;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'confine', baseURL: fake.url });
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });
  beforeEach(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-confine-'));
    root = path.join(base, 'root');
    await fs.mkdir(root);
    await fs.writeFile(path.join(base, 'secret.txt'), SECRET);
  });
  afterEach(() => fs.rm(base, { recursive: true, force: true }));

  async function runBash(command: string): Promise<string> {
    fake.enqueue(callTools({ name: 'bash', input: { command } }), say('done'));
    const handle = await startAgent(w.client, workbench, { task: 'run it', dir: root }, { workflowId: `confine-${Date.now()}-${Math.random().toString(36).slice(2)}`, taskQueue: w.taskQueue });
    expect(await handle.result()).toBe('done');
    return fake.messageRequests().at(-1)!.body.messages.at(-1).content[0].content as string;
  }

  it('refuses reads and writes outside the sandbox root; the root itself is read-write', async () => {
    const projectFile = path.resolve(__filename); // the worker can read it; the tool must not
    const out = await runBash(
      [
        'cat ../secret.txt; echo "rel=$?"',
        `cat ${path.join(base, 'secret.txt')}; echo "abs=$?"`,
        `cat ${projectFile} >/dev/null; echo "project=$?"`,
        'echo planted > ../escaped.txt', // lands in the private /tmp at most, never on the host
        'echo planted > /planted.txt; echo "write=$?"',
        'echo planted > /usr/planted.txt; echo "usr=$?"',
        'echo kept > inside.txt && cat inside.txt',
        'ls /root >/dev/null 2>&1; echo "home=$?"',
        'ls /',
      ].join('\n'),
    );
    expect(out).not.toContain(SECRET);
    expect(out).toMatch(/rel=1/);
    expect(out).toMatch(/abs=1/);
    expect(out).toMatch(/project=1/);
    expect(out).toMatch(/write=1/);
    expect(out).toMatch(/usr=1/);
    expect(out).toMatch(/home=2/);
    expect(out).toContain('kept');
    expect(await fs.readFile(path.join(root, 'inside.txt'), 'utf8')).toBe('kept\n');
    await expect(fs.stat(path.join(base, 'escaped.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    // The top level holds the system directories and the path down to the root, nothing of the worker's.
    const top = out.split('--- stdout ---\n')[1]!.split('--- stderr ---')[0]!.split('\n').slice(-12);
    for (const hidden of ['root', 'work', 'home', 'etc/shadow', 'opt', 'var']) expect(top).not.toContain(hidden);
  }, 60_000);

  it('reaches no network (the fake model server on loopback is unreachable from bash)', async () => {
    const port = new URL(fake.url).port;
    const out = await runBash(`(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo net=open || echo net=closed`);
    expect(out).toContain('net=closed');
  }, 60_000);

  it("sees none of the worker's environment and no other process", async () => {
    process.env.FH_CONFINE_WORKER_SECRET = SECRET; // in the worker's (this process's) environment
    try {
      const out = await runBash(`env; echo "[$FH_CONFINE_WORKER_SECRET]"; cat /proc/${process.pid}/environ; echo "procs=$(ls /proc | grep -c '^[0-9]')"`);
      expect(out).toContain('[]');
      expect(out).not.toContain(SECRET);
      expect(out).toContain(`HOME=${root}`);
      // Its own process namespace: its init, bash, and what bash runs; not the worker or anything else.
      expect(Number(/procs=(\d+)/.exec(out)![1])).toBeLessThanOrEqual(5);
    } finally {
      delete process.env.FH_CONFINE_WORKER_SECRET;
    }
  }, 60_000);

  it('a cancelled run kills every process bash started (the whole process group)', async () => {
    const stamp = `86${String(process.pid).padStart(7, '0').slice(-7)}.5`; // a sleep no other test runs
    fake.enqueue(callTools({ name: 'bash', input: { command: `sleep ${stamp} & sleep ${stamp} & touch started; wait` } }), say('never'));
    const handle = await startAgent(w.client, workbench, { task: 'sleep', dir: root }, { workflowId: `confine-cancel-${Date.now()}`, taskQueue: w.taskQueue });
    const running = () => {
      try {
        return execFileSync('pgrep', ['-f', `^sleep ${stamp}$`], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).length;
      } catch {
        return 0; // pgrep exits 1 when nothing matches
      }
    };
    await until(async () => (await fs.stat(path.join(root, 'started')).catch(() => null)) !== null && running() === 2);
    await handle.workflow.cancel();
    await expect(handle.result()).rejects.toThrow();
    await until(async () => running() === 0);
    expect(running()).toBe(0);
  }, 60_000);
});

async function until(check: () => Promise<boolean>, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 100));
  }
}
