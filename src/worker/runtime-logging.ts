/**
 * The Temporal runtime's logger as the SDK's own entry points leave it: one line per entry (Temporal's
 * default prints each entry's metadata as a multi-line object), at a level that suits the caller. It is
 * installed only when the process has no runtime yet: an application that installed its own keeps it.
 */
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';

/** Writes a log entry as one line to stderr: time, level, message, metadata as JSON. */
export function oneLine(entry: LogEntry): void {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  let meta = '';
  if (entry.meta && Object.keys(entry.meta).length > 0) {
    try {
      meta = ` ${JSON.stringify(entry.meta, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v instanceof Error ? v.message : v))}`;
    } catch {
      meta = ' {…}';
    }
  }
  process.stderr.write(`${time} [${entry.level}] ${entry.message}${meta}\n`);
}

let installed = false;

/** Installs a one-line logger at `level` unless a runtime exists already (then: the application's own). */
export function ensureQuietRuntime(level: LogLevel): void {
  if (installed) return;
  installed = true;
  try {
    Runtime.install({ logger: new DefaultLogger(level, oneLine) });
  } catch {
    // A runtime exists (the application's, or one made by an earlier connection): leave it alone.
  }
}
