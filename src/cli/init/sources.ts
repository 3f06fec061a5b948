/** The TypeScript sources `fh init` writes under src/: an agent with a tool, a worker, a client, a test. */
import type { ModuleKind } from './tsconfig';

export const AGENTS = `// The agent and its tool. On Temporal this is workflow code: it imports nothing Node-only.
import { agent, schema, tool } from '@fabric-harness/sdk';

export const add = tool({
  name: 'add',
  description: 'Add two integers.',
  input: schema.object({ a: schema.number().int(), b: schema.number().int() }),
  execute: ({ a, b }) => String(a + b),
});

export const calculator = agent({
  name: 'calculator', // also the workflow type on Temporal
  input: schema.object({ task: schema.string() }),
  run: async ({ init, input }) => {
    const fabric = await init({ system: 'You are a careful calculator. Use the add tool.', tools: [add] });
    const session = await fabric.session();
    const reply = await session.prompt(input.task);
    return { reply, usage: session.usage() };
  },
});
`;

/** An ES module names its agents file by URL (no require.resolve); under tsx the .ts file is loaded. */
const WORKER_ESM = `// The worker: runs the agents of ./agents on Temporal (TEMPORAL_ADDRESS, default localhost:7233).
// The model: ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL pointing at \`fh fake\` (npm run dev does that).
import { createWorker } from '@fabric-harness/sdk/worker';

const agents = new URL(import.meta.url.endsWith('.ts') ? './agents.ts' : './agents.js', import.meta.url);
const worker = await createWorker({ agents });
console.log('worker ready: agents of', agents.pathname);
await worker.run(); // until Ctrl-C
`;

const WORKER_CJS = `// The worker: runs the agents of ./agents on Temporal (TEMPORAL_ADDRESS, default localhost:7233).
// The model: ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL pointing at \`fh fake\` (npm run dev does that).
import { createWorker } from '@fabric-harness/sdk/worker';

async function main() {
  const worker = await createWorker({ agents: require.resolve('./agents') });
  console.log('worker ready: agents of', require.resolve('./agents'));
  await worker.run(); // until Ctrl-C
}
main().catch((err) => { console.error(err); process.exit(1); });
`;

export const worker = (kind: ModuleKind): string => (kind === 'esm' ? WORKER_ESM : WORKER_CJS);

export const CLIENT = `// The client: starts the agent as a durable workflow and prints its reply (a worker must be running).
import { connectClient, startAgent } from '@fabric-harness/sdk/client';
import { calculator } from './agents.js';

async function main() {
  const task = process.argv.slice(2).join(' ') || 'Add 2 and 3';
  const client = await connectClient(); // TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE, else localhost:7233
  try {
    const handle = await startAgent(client, calculator, { task }, { workflowId: \`calculator-\${Date.now()}\` });
    console.log(\`started \${handle.workflowId}: \${task}\`);
    const { reply, usage } = await handle.result();
    console.log(\`reply: \${reply} (\${usage.modelCalls} model calls)\`);
  } finally {
    await client.connection.close();
  }
}
main().catch((err) => { console.error(err); process.exit(1); });
`;

export const TEST = `// The agent, inline against the scripted fake Anthropic server: no API key, no Temporal, a second.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { calculator } from './agents.js';

test('the calculator adds with its tool', async () => {
  const fake = await FakeAnthropicServer.start({ script: [callTools({ name: 'add', input: { a: 2, b: 3 } }), say('2 + 3 = 5')] });
  try {
    const result = await calculator.invoke({ task: 'Add 2 and 3' }, { apiKey: 'test', baseURL: fake.url });
    assert.equal(result.reply, '2 + 3 = 5');
    assert.equal(fake.messageRequests().length, 2); // the tool call, then the answer
  } finally {
    await fake.stop();
  }
});
`;
