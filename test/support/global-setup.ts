/**
 * Jest global setup for the `integration` project: starts ONE Temporal dev server for the whole run and hands its
 * address to the test files through the environment (jest workers inherit the env of the process that spawns them):
 *
 *   FH_TEST_TEMPORAL_ADDRESS    host:port of the frontend, e.g. 127.0.0.1:40123
 *   FH_TEST_TEMPORAL_NAMESPACE  namespace created at startup ("default")
 *
 * The server has the SDK's custom search attributes (src/wire/search-attributes.ts). If FH_TEST_TEMPORAL_ADDRESS is
 * already set (e.g. to a server from temporal-docker/), no server is started and the tests run against that one,
 * which must have them too.
 *
 * The server is kept on globalThis so that global-teardown.ts (same process) can stop it.
 */
import { startDevServer, type DevServer } from '../../src/testing/temporal-cli';
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { bundleTestAgents } from './bundle-once';

declare global {
  // eslint-disable-next-line no-var
  var __FH_TEMPORAL_DEV_SERVER__: DevServer | undefined;
}

export default async function globalSetup(): Promise<void> {
  const log = (line: string): void => {
    process.stderr.write(`[temporal] ${line}\n`);
  };
  // Workflow code of the test agents, bundled once for every suite (webpack takes seconds).
  process.env.FH_TEST_WORKFLOW_BUNDLE = await bundleTestAgents();
  if (process.env.FH_TEST_TEMPORAL_ADDRESS) {
    process.env.FH_TEST_TEMPORAL_NAMESPACE ??= 'default';
    log(
      `using the existing Temporal server at ${process.env.FH_TEST_TEMPORAL_ADDRESS} ` +
        `(namespace ${process.env.FH_TEST_TEMPORAL_NAMESPACE})`,
    );
    return;
  }
  process.stderr.write('\n');
  // Tests that delete a closed run wait until it is gone: a few seconds with the dev server's default
  // dynamic config (DEV_SERVER_DYNAMIC_CONFIG), about 34 s a run without it.
  const server = await startDevServer({ ui: false, namespace: 'default', searchAttributes: { ...FH_SEARCH_ATTRIBUTES }, onProgress: log });
  globalThis.__FH_TEMPORAL_DEV_SERVER__ = server;
  process.env.FH_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.FH_TEST_TEMPORAL_NAMESPACE = server.namespace;
}
