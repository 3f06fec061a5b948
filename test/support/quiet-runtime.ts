// Worker logs at WARN in tests: INFO state changes drown the output. Runtime is per process, installed once.
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed by an earlier test file in this jest worker
}
