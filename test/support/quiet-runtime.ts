// Worker logs at WARN in tests: INFO state changes drown the output. Runtime is per process, installed once.
// Every WARN/ERROR line is also kept (globalThis.__FH_WORKER_LOG__), so a test can assert on what the
// worker said (no TMPRL1102 "workflow finished while an update handler was still running").
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';

declare global {
  // eslint-disable-next-line no-var
  var __FH_WORKER_LOG__: LogEntry[] | undefined;
}

const kept: LogEntry[] = (globalThis.__FH_WORKER_LOG__ ??= []);
const print = new DefaultLogger('WARN');
try {
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => {
      kept.push(entry);
      print.log(entry.level, entry.message, entry.meta);
    }),
  });
} catch {
  // already installed by an earlier test file in this jest worker
}
