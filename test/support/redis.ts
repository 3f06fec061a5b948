/**
 * A Redis server of the test's own (Debian's redis-server, installed by scripts/redis.js), on a free
 * loopback port, nothing saved to disk; stopped (and its process gone) by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { getFreePort } from '../../src/testing/loopback-ports';

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * On a chosen port (`getFreePort`: below the ephemeral range), started again on another when something took
 * it between choosing and binding (as once happened to the dev server under CI's load); a named port is not swapped.
 */
export async function startRedis(port?: number): Promise<TestRedis> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRedisOn(port ?? (await getFreePort()));
    } catch (err) {
      if (port !== undefined || attempt >= 3 || !/Address already in use/i.test(String(err))) throw err;
    }
  }
}

async function startRedisOn(p: number): Promise<TestRedis> {
  const child: ChildProcess = spawn(process.env.REDIS_SERVER_PATH ?? 'redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      if (/Ready to accept connections/.test(out)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out.slice(-500)}`)));
    child.once('error', reject);
  });
  return {
    url: `redis://127.0.0.1:${p}`,
    port: p,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
