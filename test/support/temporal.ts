/**
 * Connections to the Temporal server of the integration run (started by global-setup.ts).
 *
 *   const t = await testConnection();       // in beforeAll
 *   Worker.create({ connection: t.nativeConnection, namespace: t.namespace, ... });
 *   t.client.workflow.start(...);
 *   await t.close();                        // in afterAll
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';

export interface TestConnection {
  /** For clients (`@temporalio/client`). */
  connection: Connection;
  /** For workers (`@temporalio/worker`). */
  nativeConnection: NativeConnection;
  client: Client;
  /** host:port of the server. */
  address: string;
  namespace: string;
  /** Close both connections (the server keeps running until the global teardown). */
  close(): Promise<void>;
}

export async function testConnection(): Promise<TestConnection> {
  const address = process.env.FH_TEST_TEMPORAL_ADDRESS;
  if (!address) {
    throw new Error(
      'FH_TEST_TEMPORAL_ADDRESS is not set. Run integration tests through the jest "integration" project ' +
        '(`npx jest --selectProjects integration`), whose global setup starts a Temporal dev server, ' +
        'or set FH_TEST_TEMPORAL_ADDRESS=host:port to use a running server.',
    );
  }
  const namespace = process.env.FH_TEST_TEMPORAL_NAMESPACE || 'default';
  const connection = await Connection.connect({ address });
  let nativeConnection: NativeConnection;
  try {
    nativeConnection = await NativeConnection.connect({ address });
  } catch (err) {
    await connection.close();
    throw err;
  }
  const client = new Client({ connection, namespace });
  let closing: Promise<void> | undefined;
  return {
    connection,
    nativeConnection,
    client,
    address,
    namespace,
    close(): Promise<void> {
      closing ??= Promise.all([connection.close(), nativeConnection.close()]).then(() => undefined);
      return closing;
    },
  };
}
