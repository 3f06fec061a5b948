/**
 * Per-tool approval (`needsApproval`) in an inline run: the call waits for invoke's `onApproval`, runs
 * only when approved, and a denial (with its note) reaches the model as the call's result. A run with no
 * approver denies such a call and tells the model why; a function rule decides per input.
 */
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { gatekeeper } from '../fixtures/agents';

const lastToolResult = (fake: FakeAnthropicServer) => {
  const messages = fake.messageRequests().at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
  const content = messages.at(-1)!.content as Array<{ type: string; content?: string; is_error?: boolean }>;
  return content.find((b) => b.type === 'tool_result')!;
};

describe('needsApproval inline', () => {
  let fake: FakeAnthropicServer;
  beforeEach(async () => {
    fake = await FakeAnthropicServer.start();
  });
  afterEach(() => fake.stop());

  it('approved: the approver sees the call, then the tool runs', async () => {
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'api' } }), say('Done.'));
    const asked: unknown[] = [];
    const r = await gatekeeper.invoke({ task: 'deploy api' }, { apiKey: 'k', baseURL: fake.url, onApproval: (req) => (asked.push(req), true) });
    expect(r.reply).toBe('Done.');
    expect(asked).toEqual([{ callId: expect.any(String), tool: 'deploy', input: { service: 'api' } }]);
    expect(lastToolResult(fake)).toMatchObject({ content: 'deployed api' });
  });

  it('denied with a note: the tool does not run and the model reads the note', async () => {
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'api' } }), say('Understood.'));
    await gatekeeper.invoke({ task: 'deploy api' }, { apiKey: 'k', baseURL: fake.url, onApproval: async () => ({ approved: false, note: 'not on a Friday' }) });
    const result = lastToolResult(fake);
    expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('denied the call to deploy: not on a Friday') });
    expect(result.content).not.toContain('deployed');
  });

  it('no approver: the call is denied and the model is told nobody can approve it', async () => {
    fake.enqueue(callTools({ name: 'deploy', input: { service: 'api' } }), say('I could not deploy.'));
    await gatekeeper.invoke({ task: 'deploy api' }, { apiKey: 'k', baseURL: fake.url });
    expect(lastToolResult(fake)).toMatchObject({ is_error: true, content: expect.stringContaining('needs a person\'s approval, and this run has no approver') });
  });

  it('a function rule asks only for the inputs it names', async () => {
    fake.enqueue(callTools({ name: 'refund', input: { amount: 20 } }, { name: 'refund', input: { amount: 500 } }), say('Refunded the small one.'));
    const asked: unknown[] = [];
    await gatekeeper.invoke({ task: 'refunds' }, { apiKey: 'k', baseURL: fake.url, onApproval: (req) => (asked.push(req.input), false) });
    expect(asked).toEqual([{ amount: 500 }]);
    const messages = fake.messageRequests().at(-1)!.body.messages as Array<{ content: Array<{ type: string; content?: string }> }>;
    const results = messages.at(-1)!.content.filter((b) => b.type === 'tool_result').map((b) => b.content);
    expect(results).toEqual(['refunded 20', expect.stringContaining('denied the call to refund')]);
  });

  it('tool() refuses a needsApproval that is neither a boolean nor a function', async () => {
    const { tool, schema } = await import('@fabric-harness/sdk');
    expect(() => tool({ name: 'x', description: 'x', input: schema.object({}), needsApproval: 'yes' as never })).toThrow(
      "tool 'x': needsApproval must be a boolean or a function of the input",
    );
  });
});
