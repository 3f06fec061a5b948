import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime, type WorkerOptions } from '@temporalio/worker';
import { InvalidInputError } from '../../src/core/errors';
import { FabricHarnessPlugin } from '../../src/worker/plugin';
import { FileTranscriptStore } from '../../src/activities/stores/transcript-store';
import {
  BYTES_PER_CACHED_SESSION,
  DEFAULT_SESSION_CACHE_SHARE,
  MIN_CACHED_SESSIONS,
  chooseSessionCache,
  heapCeiling,
  memoryLimit,
} from '../../src/worker/session-cache';

const GB = 1e9;
const store = () => new FileTranscriptStore(mkdtempSync(join(tmpdir(), 'fh-session-cache-')));
/** What the plugin hands Temporal for a worker configured with `options` (and logs, once). */
function configured(pluginOptions: ConstructorParameters<typeof FabricHarnessPlugin>[0], options: Partial<WorkerOptions> = {}) {
  const logged: string[] = [];
  const spy = jest.spyOn(Runtime.instance().logger, 'info').mockImplementation((m: string) => void logged.push(m));
  try {
    const out = new FabricHarnessPlugin({ store: store(), ...pluginOptions }).configureWorker({ taskQueue: 'q', ...options } as WorkerOptions);
    return { maxCachedWorkflows: out.maxCachedWorkflows, logged: logged.filter((m) => m.includes('maxCachedWorkflows')) };
  } finally {
    spy.mockRestore();
  }
}

describe('sessions per worker bounded by a memory budget', () => {
  it('the plugin sets maxCachedWorkflows to the budget in bytes over the measured bytes per session, and logs why once', () => {
    const { maxCachedWorkflows, logged } = configured({ sessionCacheMemory: 1 * GB });
    expect(maxCachedWorkflows).toBe(Math.min(Math.floor(GB / BYTES_PER_CACHED_SESSION), heapCeiling()));
    expect(maxCachedWorkflows).toBeLessThan(1000);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/maxCachedWorkflows \d+: sessionCacheMemory 1000 MB \(bytes set\) \/ [\d.]+ MB per cached session/);
  });

  it('a share of memory is a share of the worker memory limit (the container limit when there is one)', () => {
    expect(chooseSessionCache({ sessionCacheMemory: 0.5, memoryLimitBytes: 4 * GB, heapCeiling: 1e6 }).maxCachedWorkflows).toBe(Math.floor((2 * GB) / BYTES_PER_CACHED_SESSION));
    // The default share, of the limit.
    expect(chooseSessionCache({ memoryLimitBytes: 10 * GB, heapCeiling: 1e6 }).maxCachedWorkflows).toBe(Math.floor((10 * GB * DEFAULT_SESSION_CACHE_SHARE) / BYTES_PER_CACHED_SESSION));
    const cgroup = (limit: string) => (path: string) => (path === '/sys/fs/cgroup/memory.max' ? `${limit}\n` : undefined);
    expect(memoryLimit(cgroup('2147483648'))).toEqual({ bytes: 2147483648, source: "the container's limit, /sys/fs/cgroup/memory.max" });
    expect(memoryLimit(cgroup('max')).source).toBe("the machine's memory");
  });

  it('is clamped: at least the floor, at most the heap ceiling Temporal defaults to', () => {
    expect(chooseSessionCache({ sessionCacheMemory: 1_000_000, heapCeiling: 5000 }).maxCachedWorkflows).toBe(MIN_CACHED_SESSIONS);
    const capped = chooseSessionCache({ sessionCacheMemory: 1000 * GB, heapCeiling: 2310 });
    expect(capped.maxCachedWorkflows).toBe(2310);
    expect(capped.reason).toMatch(/capped at 2310 by the heap/);
  });

  it("an explicit maxCachedWorkflows wins over the budget", () => {
    expect(configured({ sessionCacheMemory: 1 * GB }, { maxCachedWorkflows: 7 }).maxCachedWorkflows).toBe(7);
    expect(configured({}, { maxCachedWorkflows: 0 }).maxCachedWorkflows).toBe(0);
  });

  it.each([
    ['sessionCacheMemory', { sessionCacheMemory: -1 }, {}],
    ['sessionCacheMemory', { sessionCacheMemory: 1.5 }, {}],
    ['sessionCacheMemory', { sessionCacheMemory: '2GB' as unknown as number }, {}],
    ['sessionCacheMemory', { sessionCacheMemory: Number.NaN }, {}],
    ['maxCachedWorkflows', {}, { maxCachedWorkflows: -3 }],
  ])('a bad value is an InvalidInputError naming %s', (field, pluginOptions, options) => {
    let caught: unknown;
    try {
      configured(pluginOptions, options);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidInputError);
    expect((caught as InvalidInputError).code).toBe('INVALID_INPUT');
    expect((caught as InvalidInputError).field).toBe(field);
    expect((caught as Error).message).toContain(field);
  });
});
