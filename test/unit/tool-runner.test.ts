/**
 * The tool runner is the same code inline and in the tool activity: a tool's timeoutMs aborts it and
 * answers an error result, and cancelling an inline run (invoke's signal) aborts the running tool.
 */
import { agent, schema, tool } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { runToolImplementation } from '../../src/activities/tools/tool-runner';

const ctx = (signal = new AbortController().signal) => ({ cwd: process.cwd(), signal, heartbeat: () => undefined });

describe('tool runner', () => {
  it("aborts a tool past its timeoutMs and answers an error result", async () => {
    let aborted = false;
    const started = Date.now();
    const result = await runToolImplementation(
      (_input, { signal }) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            setTimeout(() => resolve('too late'), 50);
          });
        }),
      'hang',
      {},
      ctx(),
      { timeoutMs: 200 },
    );
    expect(result).toEqual({ content: expect.stringMatching(/tool 'hang' did not finish within its timeout of 200 ms/), isError: true });
    expect(aborted).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('leaves a tool without timeoutMs alone', async () => {
    const result = await runToolImplementation(async () => new Promise((r) => setTimeout(() => r('done'), 300)), 'slow', {}, ctx());
    expect(result).toEqual({ content: 'done', isError: false });
  });

  it('inline: the tool timeoutMs is honoured, and the model hears about it', async () => {
    const fake = await FakeAnthropicServer.start({ script: [callTools({ name: 'hang', input: {} }), say('gave up')] });
    const hang = tool({
      name: 'hang',
      description: 'Never finishes.',
      input: schema.object({}),
      timeoutMs: 300,
      execute: (_i, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    const a = agent({
      name: 'hanger',
      run: async ({ init }) => (await (await init({ tools: [hang], compaction: { enabled: false } })).session()).prompt('go'),
    });
    try {
      expect(await a.invoke({}, { apiKey: 'k', baseURL: fake.url })).toBe('gave up');
      const last = fake.messageRequests().at(-1)!.body.messages.at(-1).content[0];
      expect(last).toMatchObject({ type: 'tool_result', is_error: true, content: expect.stringMatching(/timeout of 300 ms/) });
    } finally {
      await fake.stop();
    }
  });

  it("inline: aborting invoke's signal cancels the running tool and the run", async () => {
    const fake = await FakeAnthropicServer.start({ script: [callTools({ name: 'wait', input: {} })] });
    let toolAborted = false;
    const wait = tool({
      name: 'wait',
      description: 'Waits to be cancelled.',
      input: schema.object({}),
      execute: (_i, { signal }) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            toolAborted = true;
            reject(new Error('cancelled'));
          }),
        ),
    });
    const a = agent({
      name: 'waiter',
      run: async ({ init }) => (await (await init({ tools: [wait], compaction: { enabled: false } })).session()).prompt('go'),
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    try {
      await expect(a.invoke({}, { apiKey: 'k', baseURL: fake.url, signal: controller.signal })).rejects.toThrow();
      expect(toolAborted).toBe(true);
    } finally {
      await fake.stop();
    }
  });
});
