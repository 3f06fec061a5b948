/**
 * Options checked for unknown keys before anything is sent: a misspelt key is INVALID_INPUT naming it,
 * every key a call takes passes, with or without a value.
 */
import { checkKnownKeys } from '../../src/core/validate';
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
