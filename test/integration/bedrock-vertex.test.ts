/**
 * Claude on Bedrock and on Vertex, end to end on the dev server: a worker whose connections are
 * served by each platform's fake runs an agent with tools; the official SDKs sign and send each call
 * in the platform's shape, and the conversation goes round as on Anthropic direct.
 *
 * Runs do not name a connection yet (the threading from workflows to the model activities is another
 * change), so each worker serves its default connection, `anthropic`, from the platform
 * (`connections: { anthropic: { provider: 'bedrock', … } }`): the path from the worker's settings
 * through the activities to the provider, SDK and endpoint is the one a named connection takes.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { startAgent } from '@fabric-harness/sdk/client';
import { callTools, FakeBedrockServer, FakeVertexServer, say } from '@fabric-harness/sdk/testing';
import { createWorker, FabricHarnessPlugin, FileTranscriptStore, type CreateWorkerOptions } from '@fabric-harness/sdk/worker';
import { calculator } from '../fixtures/agents';
import { testBundle } from '../support/bundle';
import { TEST_AGENT_MODULES } from '../support/bundle-once';
import { testConnection } from '../support/temporal';

const SECRET = 'bedrock-secret-that-never-enters-history';
const TOKEN = 'ya29.vertex-token-that-never-enters-history';

const script = () => [callTools({ name: 'add', input: { a: 2, b: 3 } }), callTools({ name: 'write_file', input: { path: 'sum.txt', content: '5' } }), say('The sum is 5.')];

/** Runs the calculator on a worker with these connections; the run's history as JSON, and where it wrote. */
async function runOn(name: string, connections: CreateWorkerOptions['connections'], defaultModel: string) {
  const t = await testConnection();
  const store = new FileTranscriptStore(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-store-')));
  const taskQueue = `${name}-${process.pid}-${Date.now()}`;
  const worker = await createWorker({
    agents: TEST_AGENT_MODULES,
    tools: [require.resolve('../fixtures/agent-tools')],
    connection: t.nativeConnection,
    namespace: t.namespace,
    taskQueue,
    model: { defaultModel },
    connections,
    store,
    workflowBundle: await testBundle(),
  });
  const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `fh-${name}-`));
  try {
    return await worker.runUntil(async () => {
      const handle = await startAgent(client, calculator, { task: 'Add 2 and 3, then save the sum', dir }, { workflowId: `${name}-${Date.now()}`, taskQueue });
      const result = await handle.result();
      const history = JSON.stringify(await handle.fetchHistory());
      return { result, history, written: await fs.readFile(path.join(dir, 'sum.txt'), 'utf8') };
    });
  } finally {
    await t.close();
  }
}

describe('Claude on Bedrock and Vertex, on the dev server', () => {
  it('runs an agent with tools through AnthropicBedrock against the Bedrock fake', async () => {
    const model = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
    const fake = await FakeBedrockServer.start({ script: script(), awsAccessKey: 'AKIDEXAMPLE', region: 'us-east-1' });
    try {
      const bedrock = { provider: 'bedrock' as const, baseURL: fake.url, region: 'us-east-1', awsAccessKey: 'AKIDEXAMPLE', awsSecretKey: SECRET };
      const { result, history, written } = await runOn('bedrock', { anthropic: bedrock, bedrock }, model);
      expect(result.reply).toBe('The sum is 5.');
      expect(written).toBe('5');
      expect(fake.requests.map((r) => r.path)).toEqual(
        Array(3).fill(`/model/${model}/invoke-with-response-stream`),
      );
      for (const r of fake.requests) {
        expect(r.headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
        expect(r.body.anthropic_version).toBe('bedrock-2023-05-31');
      }
      // The tool results went round: the last call carries both.
      const last = fake.requests[2]!.body.messages;
      expect(last.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
      expect(last[2].content[0]).toMatchObject({ type: 'tool_result', content: '5' });
      expect(history).not.toContain(SECRET);
    } finally {
      await fake.stop();
    }
  });

  it('runs an agent with tools through AnthropicVertex against the Vertex fake', async () => {
    const model = 'claude-sonnet-4-5@20250929';
    const fake = await FakeVertexServer.start({ script: script(), accessToken: TOKEN, projectId: 'proj', region: 'us-east5' });
    try {
      const vertex = { provider: 'vertex' as const, baseURL: fake.url, region: 'us-east5', projectId: 'proj', accessToken: TOKEN };
      const { result, history, written } = await runOn('vertex', { anthropic: vertex, vertex }, model);
      expect(result.reply).toBe('The sum is 5.');
      expect(written).toBe('5');
      expect(fake.requests.map((r) => decodeURIComponent(r.path))).toEqual(
        Array(3).fill(`/v1/projects/proj/locations/us-east5/publishers/anthropic/models/${model}:streamRawPredict`),
      );
      for (const r of fake.requests) expect(r.body.anthropic_version).toBe('vertex-2023-10-16');
      expect(fake.requests[2]!.body.messages[2].content[0]).toMatchObject({ type: 'tool_result', content: '5' });
      expect(history).not.toContain(TOKEN);
    } finally {
      await fake.stop();
    }
  });
});
