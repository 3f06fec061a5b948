/**
 * Observation masking inline, against the scripted fake Anthropic server: with
 * compaction.toolResults.maskAfterEntries set, a later request carries one-line placeholders for old
 * tool results and the full text of recent ones (and of test output, which is evidence).
 */
import { init, schema, tool, type AgentEvent } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { savedAnthropicEnv } from '../support/anthropic-env';

const source = (path: string) => Array.from({ length: 40 }, (_, l) => `${path} line ${l}: export const value${l} = ${l};`).join('\n');
const TEST_OUTPUT = 'PASS test/a.test.ts\nTests:       3 passed, 3 total';

describe('masking in an inline session', () => {
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    env.pointAt(fake.url);
  });
  afterAll(async () => {
    await fake.stop();
    env.restore();
  });

  const read = tool({ name: 'read_source', description: 'Read a file.', input: schema.object({ path: schema.string() }), execute: ({ path }) => source(path) });
  const run = tool({ name: 'run', description: 'Run a command.', input: schema.object({ command: schema.string() }), execute: () => TEST_OUTPUT });

  it('old results reach the model as placeholders, recent ones in full', async () => {
    const events: AgentEvent[] = [];
    const h = await init({ contextWindowTokens: 100_000, tools: [read, run], compaction: { toolResults: { maskAfterEntries: 4 } }, onEvent: (e) => events.push(e) });
    const session = await h.session();
    const paths = Array.from({ length: 8 }, (_, i) => `src/f${i}.ts`);
    fake.enqueue(
      callTools({ name: 'run', input: { command: 'npm test' } }),
      ...paths.map((path) => callTools({ name: 'read_source', input: { path } })),
      say('done'),
    );
    const first = fake.requests.length;
    expect(await session.prompt('read the sources')).toBe('done');
    const last = fake.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
    expect(fake.requests.length - first).toBe(10); // masking made no extra model call
    const results = last.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === 'tool_result') as { content: unknown }[];
    const text = (c: unknown) => (typeof c === 'string' ? c : (c as { text: string }[]).map((b) => b.text).join(''));
    const contents = results.map((r) => text(r.content));
    expect(contents[0]).toBe(TEST_OUTPUT);
    expect(contents[1]).toBe(`[tool: read_source("src/f0.ts") → 40 lines, ${source('src/f0.ts').length} chars]`);
    expect(contents.at(-1)).toBe(source('src/f7.ts'));
    const placeholders = contents.filter((c) => c.startsWith('[tool: read_source('));
    expect(placeholders.length).toBeGreaterThanOrEqual(4);
    expect(events.some((e) => e.type === 'masking')).toBe(true);
    // Earlier requests went out unmasked: masking waited for a chunk of stale results.
    const early = fake.requests[first + 3]!.body as { messages: { content: unknown }[] };
    expect(JSON.stringify(early.messages)).not.toContain('[tool: read_source(');
  });
});
