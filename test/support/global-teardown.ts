/** Jest global teardown for the `integration` project: stops the dev server started by global-setup.ts. */
import type { DevServer } from '../../src/testing/temporal-cli';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as { __FH_TEMPORAL_DEV_SERVER__?: DevServer }).__FH_TEMPORAL_DEV_SERVER__;
  if (!server) return; // tests ran against an external server, or setup failed before starting one
  (globalThis as { __FH_TEMPORAL_DEV_SERVER__?: DevServer }).__FH_TEMPORAL_DEV_SERVER__ = undefined;
  delete process.env.FH_TEST_TEMPORAL_ADDRESS;
  delete process.env.FH_TEST_TEMPORAL_NAMESPACE;
  await server.stop();
}
