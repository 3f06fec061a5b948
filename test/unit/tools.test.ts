/** Tool declarations vs implementations: what a tool is (workflow-safe) and what it does (Node code). */
import { agent, implement, schema, tool } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { ToolRegistry } from '../../src/core/tool-registry';

const shout = tool({ name: 'shout', description: 'Upper-case the text.', input: schema.object({ text: schema.string() }) });
const shoutImpl = implement(shout, ({ text }) => text.toUpperCase());

describe('tool declarations and implementations', () => {
  it('tool() without execute is a declaration; implement() attaches code to it by name', () => {
    expect(shout.kind).toBe('tool');
    expect(shout.execute).toBeUndefined();
    expect(shoutImpl).toMatchObject({ kind: 'tool-implementation', name: 'shout', tool: shout });
    expect(() => implement({} as any, () => '')).toThrow(expect.objectContaining({ code: 'INVALID_TOOL_DEFINITION' }));
    expect(() => implement(shout, 'nope' as any)).toThrow(/execute must be a function/);
  });

  it('a registry collects code from implementations, tools with execute, modules and agents, once', () => {
    const echo = tool({ name: 'echo', description: 'Echo.', input: schema.object({}), execute: () => 'e' });
    const hidden = tool({ name: 'hidden', description: 'Only listed by its agent.', input: schema.object({}), execute: () => 'h' });
    const a = agent({ name: 'lister', tools: [hidden, shout], run: async () => 1 });
    const module = { echo, a, shout, both: [echo, shoutImpl] };
    const registry = ToolRegistry.from([module, shoutImpl]);
    expect(registry.names().sort()).toEqual(['echo', 'hidden', 'shout']);
    expect(registry.missing([shout, echo, tool({ name: 'other', description: 'x', input: schema.object({}) })])).toEqual(['other']);
    // Built-ins always have code.
    expect(registry.missing([{ kind: 'tool', name: 'bash', description: 'x', input: schema.object({}) }])).toEqual([]);
    expect(() => ToolRegistry.from([shoutImpl, implement(shout, () => 'other')])).toThrow(
      expect.objectContaining({ code: 'DUPLICATE_TOOL_IMPLEMENTATION', tool: 'shout' }),
    );
  });

  it('agent({ tools }) takes tool definitions only', () => {
    expect(() => agent({ name: 'bad-tools', tools: ['bash'] as any, run: async () => 1 })).toThrow(/tools must be an array of tool/);
  });
});

describe('inline runs and declared tools', () => {
  let fake: FakeAnthropicServer;
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
  });
  afterAll(() => fake.stop());

  const shouter = agent({
    name: 'shouter',
    run: async ({ init }) => (await (await init({ tools: [shout], contextWindowTokens: 100_000 })).session()).prompt<string>('shout hi'),
  });
  const declaringShouter = agent({ name: 'declaring-shouter', tools: [shout], run: shouter.run });
  const options = () => ({ apiKey: 'test-key', baseURL: fake.url });

  it('invoke(input, { tools }) supplies the code of a declaration', async () => {
    fake.enqueue(callTools({ name: 'shout', input: { text: 'hi' } }), say('done'));
    await expect(shouter.invoke(undefined, { ...options(), tools: [shoutImpl] })).resolves.toBe('done');
    const last = fake.messageRequests().at(-1)!.body.messages;
    expect(last[2].content[0]).toMatchObject({ type: 'tool_result', content: 'HI' });
  });

  it('a declaration called without code fails the run with TOOL_NOT_REGISTERED naming the tool', async () => {
    fake.enqueue(callTools({ name: 'shout', input: { text: 'hi' } }));
    await expect(shouter.invoke(undefined, options())).rejects.toMatchObject({
      code: 'TOOL_NOT_REGISTERED',
      tool: 'shout',
      message: expect.stringContaining("invoke(input, { tools: [implement("),
    });
  });

  it('an agent that declares its tools fails before calling the model when one has no code', async () => {
    const before = fake.messageRequests().length;
    await expect(declaringShouter.invoke(undefined, options())).rejects.toMatchObject({ code: 'TOOL_NOT_REGISTERED', tool: 'shout' });
    expect(fake.messageRequests().length).toBe(before);
  });
});
