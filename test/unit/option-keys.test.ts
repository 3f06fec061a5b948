/**
 * Options checked for unknown keys before anything is sent: a misspelt key is INVALID_INPUT naming it,
 * every key a call takes passes, with or without a value.
 */
import type { Client } from '@temporalio/client';
import { checkKnownKeys } from '../../src/core/validate';
import { startAgent } from '../../src/client/start';
import { checkPromptOptions, splitWaitLimits } from '../../src/client/call-options';
import { SESSION_PROMPT_KEYS, START_SESSION_KEYS } from '../../src/client/session-options';

function refusal(check: () => void): unknown {
  try {
    check();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('checkKnownKeys', () => {
  it('passes every key it is given, set or undefined, and no options at all', () => {
    const all = Object.fromEntries(Object.keys(START_SESSION_KEYS).map((k) => [k, k === 'id' ? 's-1' : undefined]));
    expect(() => checkKnownKeys(all, START_SESSION_KEYS, 'start options')).not.toThrow();
    expect(() => checkKnownKeys({}, START_SESSION_KEYS, 'start options')).not.toThrow();
    expect(() => checkKnownKeys(undefined, START_SESSION_KEYS, 'start options')).not.toThrow();
    expect(() => checkKnownKeys({ id: 's-1', messageId: 'm-1', timeoutMs: 5 }, { ...START_SESSION_KEYS, ...SESSION_PROMPT_KEYS }, 'sendPrompt options')).not.toThrow();
  });

  it('names a misspelt key as the field', () => {
    expect(refusal(() => checkKnownKeys({ id: 's-1', tittle: 'x' }, START_SESSION_KEYS, 'start options'))).toMatchObject({ code: 'INVALID_INPUT', field: 'tittle' });
    expect(refusal(() => checkKnownKeys({ timeout: 5 }, SESSION_PROMPT_KEYS, 'prompt options'))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeout' });
  });
});

describe('checkPromptOptions', () => {
  it("passes each call's own options", () => {
    expect(() => checkPromptOptions({ messageId: 'm-1', attachments: [], store: {}, timeoutMs: 0, signal: new AbortController().signal }, 'session prompt')).not.toThrow();
    expect(() => checkPromptOptions({ messageId: 'm-1', livePollMs: 50, transport: {} }, 'session promptStream')).not.toThrow();
    expect(() => checkPromptOptions({ conversationId: 'main', sessionId: 'main', updateId: 'u-1', timeoutMs: 10 }, 'run prompt')).not.toThrow();
    expect(() => checkPromptOptions({ conversationId: 'main', messageId: 'm-1', livePollMs: 50 }, 'run promptStream')).not.toThrow();
    expect(() => checkPromptOptions(undefined, 'session prompt')).not.toThrow();
  });

  it('names a key another call takes, or none does, and a bad value', () => {
    expect(refusal(() => checkPromptOptions({ timeout: 5_000 }, 'session prompt'))).toMatchObject({ code: 'INVALID_INPUT', field: 'timeout' });
    expect(refusal(() => checkPromptOptions({ livePollMs: 50 }, 'session prompt'))).toMatchObject({ field: 'livePollMs' });
    expect(refusal(() => checkPromptOptions({ updateId: 'u-1' }, 'run promptStream'))).toMatchObject({ field: 'updateId' });
    expect(refusal(() => checkPromptOptions({ messageId: 'm-1' }, 'run prompt'))).toMatchObject({ field: 'messageId' });
    expect(refusal(() => checkPromptOptions({ messageId: '' }, 'session prompt'))).toMatchObject({ field: 'messageId' });
    expect(refusal(() => checkPromptOptions({ attachments: 'a.png' }, 'session prompt'))).toMatchObject({ field: 'attachments' });
  });
});

describe('splitWaitLimits', () => {
  it('keeps the limits out of what is sent', () => {
    const signal = new AbortController().signal;
    expect(splitWaitLimits({ transferSummary: true, timeoutMs: 500, signal })).toEqual({ body: { transferSummary: true }, limits: { timeoutMs: 500, signal } });
    expect(splitWaitLimits({ mode: 'plan' })).toEqual({ body: { mode: 'plan' }, limits: { timeoutMs: undefined, signal: undefined } });
    expect(Object.keys(splitWaitLimits({ note: 'n', timeoutMs: 1 }).body)).toEqual(['note']);
  });

  it('sends anything but an object as it is, for the receiver to refuse', () => {
    for (const odd of [null, 42, 'x', undefined]) expect(splitWaitLimits(odd as never)).toEqual({ body: odd, limits: {} });
  });
});

describe('startAgent options', () => {
  // A client whose start records the call: a refused option must start nothing.
  function recordingClient(): { client: Client; starts: unknown[] } {
    const starts: unknown[] = [];
    const client = { workflow: { start: async (...args: unknown[]) => { starts.push(args); throw new Error('stop here'); } } } as unknown as Client;
    return { client, starts };
  }

  it('names a misspelt key or a bad value of its own as the field, and starts nothing', async () => {
    const { client, starts } = recordingClient();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ workflowId: 'w-1', workflowExecutionTimeOut: '1h' }, 'workflowExecutionTimeOut'],
      [{ workflowId: 'w-1', searchAttribute: {} }, 'searchAttribute'],
      [{ workflowId: 'w-1', streaming: 'no' }, 'streaming'],
      [{ workflowId: '' }, 'workflowId'],
      [{ workflowId: 'w-1', taskQueue: '' }, 'taskQueue'],
      [{ workflowId: 'w-1', memo: 'note' }, 'memo'],
      [{ taskQueue: 'q' }, 'workflowId'],
    ];
    for (const [options, field] of cases) {
      const err = await startAgent(client, 'calculator', {}, options as never).then(() => undefined, (e: unknown) => e);
      expect({ field, err }).toMatchObject({ field, err: { code: 'INVALID_INPUT', field, message: expect.stringContaining('startAgent options') } });
    }
    expect(await startAgent(client, 'calculator', {}, undefined as never).then(() => undefined, (e: unknown) => e)).toMatchObject({ code: 'INVALID_INPUT' });
    expect(starts).toEqual([]);
  });

  it("passes every start option Temporal's type has on to the start", async () => {
    const { client, starts } = recordingClient();
    const options = { workflowId: 'w-1', taskQueue: 'q', streaming: false, memo: { a: 1 }, workflowRunTimeout: '1h' as const, retry: { maximumAttempts: 1 }, staticSummary: 's', cronSchedule: undefined };
    await expect(startAgent(client, 'calculator', { task: 't' }, options)).rejects.toThrow('stop here');
    expect(starts).toEqual([['calculator', expect.objectContaining({ workflowId: 'w-1', taskQueue: 'q', workflowRunTimeout: '1h', retry: { maximumAttempts: 1 }, staticSummary: 's', args: [{ task: 't' }], memo: { 'fh.agent': 'calculator', 'fh.streaming': false, a: 1 } })]]);
  });
});
