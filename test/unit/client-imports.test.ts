/**
 * `@fabric-harness/sdk/client` is for processes that start and watch agents: it must not load the
 * worker (its native bridge) or the bundler (webpack). Checked in a fresh Node process, by what
 * requiring the client puts in require.cache.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function modulesLoadedBy(entry: string): string[] {
  const script = `require(${JSON.stringify(entry)}); process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const out = execFileSync(process.execPath, ['-r', path.join(ROOT, 'test/support/swc-register.js'), '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(out) as string[];
}

describe('the client entry', () => {
  it('loads neither @temporalio/worker, its core bridge, nor webpack', () => {
    const loaded = modulesLoadedBy(path.join(ROOT, 'src/client/index.ts'));
    expect(loaded.some((m) => m.includes(`${path.sep}src${path.sep}client${path.sep}`))).toBe(true);
    const heavy = loaded.filter((m) => /@temporalio[\\/](worker|core-bridge)[\\/]|[\\/]webpack[\\/]/.test(m));
    expect(heavy).toEqual([]);
  });

  it('(the worker entry does load them, so the check above can see them)', () => {
    const loaded = modulesLoadedBy(path.join(ROOT, 'src/worker/index.ts'));
    expect(loaded.some((m) => /@temporalio[\\/]worker[\\/]/.test(m))).toBe(true);
  });
});
