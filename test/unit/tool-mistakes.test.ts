/**
 * Tool mistakes are errors at once, naming what is wrong (issue 19, item 6): a misspelt built-in lists
 * the built-ins (and the one it most likely meant), a tool whose input is not a zod schema is refused by
 * tool() itself, and a tool name listed twice is refused by init() before the API would answer a 400.
 */
import { agent, init, schema, tool } from '@fabric-harness/sdk';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';

const add = tool({
  name: 'add',
  description: 'Add.',
  input: schema.object({ a: schema.number(), b: schema.number() }),
  execute: ({ a, b }) => String(a + b),
});

describe('tool mistakes', () => {
  it("a misspelt built-in names the built-ins and the near one, at the entry's index", async () => {
    const err = await init({ tools: ['write_fle' as never] }).catch((e) => e);
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.field).toBe('tools.0');
    expect(err.message).toContain("unknown built-in tool 'write_fle' (did you mean 'write_file'?)");
    expect(err.message).toContain('the built-ins are bash, read_file, write_file, edit_file');
    expect(err.message).not.toContain('Invalid input');
  });

  it('something that is neither a tool nor a name says what is expected', async () => {
    const err = await init({ tools: [{ name: 'x' } as never] }).catch((e) => e);
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message).toContain('expected a tool({...}) definition or a built-in tool name');
  });

  it('tool() refuses an input that is not a zod schema, naming the tool', () => {
    const plain = () => tool({ name: 'lookup', description: 'Look up.', input: { type: 'object', properties: {} } as never });
    expect(plain).toThrow(expect.objectContaining({ code: 'INVALID_TOOL_DEFINITION' }));
    expect(plain).toThrow("tool 'lookup': input must be a zod schema");
    expect(plain).toThrow('got a plain object');
    expect(() => tool({ name: 'lookup', description: 'Look up.', input: undefined as never })).toThrow('got undefined');
  });

  it('a tool name listed twice is refused before any model call', async () => {
    const twin = tool({ name: 'add', description: 'Another add.', input: schema.object({}), execute: () => '0' });
    const err = await init({ tools: [add, 'bash', twin] }).catch((e) => e);
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.field).toBe('tools.2');
    expect(err.message).toContain("duplicate tool name 'add' (also at tools.0)");
    const sameBuiltinTwice = await init({ tools: ['bash', 'bash'] }).catch((e) => e);
    expect(sameBuiltinTwice.message).toContain("duplicate tool name 'bash'");
  });

  it('an agent run with a duplicate fails at init, and no request reaches the API', async () => {
    const fake = await FakeAnthropicServer.start({ script: [say('never')] });
    try {
      const dup = agent({
        name: 'dup',
        run: async ({ init: i }) => (await (await i({ tools: [add, add] })).session()).prompt('hi'),
      });
      await expect(dup.invoke(undefined, { apiKey: 'k', baseURL: fake.url })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'tools.1' });
      expect(fake.requests).toHaveLength(0);
    } finally {
      await fake.stop();
    }
  });

  it('the right lists still work', async () => {
    await expect(init({ tools: [add, 'bash', 'read_file', 'write_file', 'edit_file', 'read_artifact'] })).resolves.toBeDefined();
  });
});
