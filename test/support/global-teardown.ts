/**
 * Jest global teardown for the `integration` project: stops the dev server started by global-setup.ts, and
 * turns a run that would never exit into a failure. Run in band (`--runInBand`, as one file often is), one
 * connection or timer a test (or the SDK under test) leaves open keeps jest alive after the last test, and CI
 * would hit its time limit with nothing failed; `npm test` runs the files in a worker (jest.config.js), which
 * jest stops itself. The watchdog is unref'd: it fires only when something else is still holding the process,
 * and then names what is.
 */
import type { DevServer } from '../../src/testing/temporal-cli';

/** How long jest may take to exit after the last suite before it counts as a leak. */
const EXIT_GRACE_MS = 30_000;

export default async function globalTeardown(): Promise<void> {
  armExitWatchdog();
  const server = (globalThis as { __FH_TEMPORAL_DEV_SERVER__?: DevServer }).__FH_TEMPORAL_DEV_SERVER__;
  if (!server) return; // tests ran against an external server, or setup failed before starting one
  (globalThis as { __FH_TEMPORAL_DEV_SERVER__?: DevServer }).__FH_TEMPORAL_DEV_SERVER__ = undefined;
  delete process.env.FH_TEST_TEMPORAL_ADDRESS;
  delete process.env.FH_TEST_TEMPORAL_NAMESPACE;
  await server.stop();
}

function armExitWatchdog(): void {
  setTimeout(() => {
    process.stderr.write(
      `\n[teardown] jest was still running ${EXIT_GRACE_MS / 1000} s after the last test: something a test started is still open ` +
        `(${process.getActiveResourcesInfo().join(', ')}). Run the suites in band with --detectOpenHandles to find it.\n`,
    );
    process.exit(1);
  }, EXIT_GRACE_MS).unref();
}
