import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { InvalidInputError } from '../core/errors';

/**
 * Worker RSS one idle cached session holds (bytes): Temporal keeps a cached run's workflow context and
 * its state machines in memory, mostly off the JavaScript heap, until it evicts the run.
 *
 * Measured, not guessed: issue 33's scale probe (0.6.6, Temporal TS SDK 1.13, a 2-core 25 GB Linux machine)
 * saw 2.3-2.7 MB of worker RSS per idle cached session, off the heap; the bench below measured 2.30 MB (300
 * sessions) and 2.18 MB (2,000 sessions) on 2026-11-28, SDK 0.7.0-dev. The upper end is used. Re-measure after
 * a Temporal upgrade or a change to what a session keeps in workflow memory: `npm run build &&
 * FH_BENCH_SESSIONS=300 node bench/run.js sessions-per-worker` prints "bytes per cached session"
 * ((worker RSS after N idle cached sessions - RSS before them) / N, after a full GC); put it here, rounded up.
 */
export const BYTES_PER_CACHED_SESSION = 2.7e6;

/**
 * The share of the worker's memory limit (the container's, else the machine's) that cached sessions may
 * hold by default. A fifth: the worker also needs memory for its heap, activities (model calls stream
 * whole requests), tool processes, and a machine or container seldom runs only the worker.
 */
export const DEFAULT_SESSION_CACHE_SHARE = 0.2;

/** Temporal's floor for a non-zero cache is 2; its own default never goes below 10. Neither do we. */
export const MIN_CACHED_SESSIONS = 10;

export interface SessionCacheChoice {
  maxCachedWorkflows: number;
  /** One line for the startup log: what was chosen and why. */
  reason: string;
}

export interface SessionCacheInputs {
  /** The user's `maxCachedWorkflows`, when given: it wins. */
  maxCachedWorkflows?: unknown;
  /** The budget: bytes (an integer above 1), or a share of the memory limit (a number in (0, 1]). */
  sessionCacheMemory?: unknown;
  /** The worker's memory limit in bytes; default memoryLimit(). */
  memoryLimitBytes?: number;
  /** The ceiling Temporal's own default sets from the heap; default heapCeiling(). */
  heapCeiling?: number;
}

/** maxCachedWorkflows from the memory budget (or the user's own), and why. */
export function chooseSessionCache(inputs: SessionCacheInputs): SessionCacheChoice {
  const { maxCachedWorkflows, sessionCacheMemory } = inputs;
  if (maxCachedWorkflows !== undefined) {
    if (typeof maxCachedWorkflows !== 'number' || !Number.isInteger(maxCachedWorkflows) || maxCachedWorkflows < 0) {
      throw invalid('maxCachedWorkflows', `must be a non-negative integer (0 turns the cache off), got ${show(maxCachedWorkflows)}`);
    }
    return { maxCachedWorkflows, reason: `maxCachedWorkflows ${maxCachedWorkflows} (set by the worker's options; sessionCacheMemory not applied)` };
  }
  const limit = inputs.memoryLimitBytes !== undefined ? { bytes: inputs.memoryLimitBytes, source: 'the given limit' } : memoryLimit();
  const budget = budgetBytes(sessionCacheMemory, limit);
  const ceiling = inputs.heapCeiling ?? heapCeiling();
  const fits = Math.floor(budget.bytes / BYTES_PER_CACHED_SESSION);
  const chosen = Math.max(MIN_CACHED_SESSIONS, Math.min(fits, ceiling));
  const bound = fits > ceiling ? `, capped at ${ceiling} by the heap (Temporal's default)` : fits < MIN_CACHED_SESSIONS ? `, raised to the floor of ${MIN_CACHED_SESSIONS}` : '';
  return {
    maxCachedWorkflows: chosen,
    reason: `maxCachedWorkflows ${chosen}: sessionCacheMemory ${mb(budget.bytes)} (${budget.source}) / ${mb(BYTES_PER_CACHED_SESSION)} per cached session${bound}`,
  };
}

function budgetBytes(value: unknown, limit: { bytes: number; source: string }): { bytes: number; source: string } {
  if (value === undefined) {
    return { bytes: limit.bytes * DEFAULT_SESSION_CACHE_SHARE, source: `default: ${DEFAULT_SESSION_CACHE_SHARE} of ${mb(limit.bytes)}, ${limit.source}` };
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (value > 1 && !Number.isInteger(value))) {
    throw invalid('sessionCacheMemory', `must be bytes (an integer above 1) or a share of the worker's memory (a number in (0, 1]), got ${show(value)}`);
  }
  if (value > 1) return { bytes: value, source: 'bytes set' };
  return { bytes: limit.bytes * value, source: `${value} of ${mb(limit.bytes)}, ${limit.source}` };
}

/**
 * The worker's memory limit: the container's (cgroup v2 `memory.max`, else v1 `memory.limit_in_bytes`)
 * when there is one below the machine's memory, else the machine's (`os.totalmem()`).
 */
export function memoryLimit(read: (path: string) => string | undefined = readText): { bytes: number; source: string } {
  const total = totalmem();
  for (const path of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    const raw = read(path)?.trim();
    const bytes = raw && /^\d+$/.test(raw) ? Number(raw) : undefined;
    if (bytes !== undefined && bytes > 0 && bytes < total) return { bytes, source: `the container's limit, ${path}` };
  }
  return { bytes: total, source: "the machine's memory" };
}

/** Temporal's own default (worker-options.ts, reuseV8Context): about 600 runs per GiB of heap above 200 MiB. */
export function heapCeiling(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  const heapMiB = heapLimitBytes / 2 ** 20;
  return Math.max(Math.floor((Math.max(heapMiB - 200, 0) * 600) / 1024), MIN_CACHED_SESSIONS);
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const invalid = (field: string, message: string) => new InvalidInputError('worker options', field, [{ path: field, message }]);
const show = (v: unknown) => (typeof v === 'string' ? `'${v}'` : String(v));
const mb = (n: number) => `${(n / 1e6).toFixed(n >= 1e9 ? 0 : 1)} MB`;
