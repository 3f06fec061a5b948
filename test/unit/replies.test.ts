/** interpretReply / keptEntry, and toApiMessages held to the fake API's own rules. */
import { toApiMessages, type AssistantEntry, type Entry } from '../../src/core/entries';
import { ModelRefusalError, TRUNCATED_TOOL_CALL_MESSAGE, interpretReply, keptEntry } from '../../src/core/replies';
import { validateMessagesRequest } from '../../src/testing/anthropic/fake-anthropic';

const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (id: string, input: unknown = { path: 'a' }) => ({ type: 'tool_use' as const, id, name: 'read', input });
const asst = (...content: AssistantEntry['content']): AssistantEntry => ({ type: 'assistant', content });
const valid = (entries: Entry[]) => validateMessagesRequest({ model: 'm', max_tokens: 1, messages: toApiMessages(entries) });

describe('interpretReply', () => {
  it('end_turn / stop_sequence / no reason / max_tokens without calls: the answer', () => {
    for (const r of ['end_turn', 'stop_sequence', null, undefined, 'max_tokens']) {
      expect(interpretReply(asst(text('hi')), r)).toMatchObject({ kind: 'final', text: 'hi' });
    }
  });

  it('an empty or whitespace-only reply is a final answer; the kept entry has no blank text', () => {
    expect(interpretReply(asst(), 'end_turn')).toMatchObject({ kind: 'final', text: '', keep: { content: [] } });
    const ws = interpretReply(asst(text('\n\n')), 'end_turn');
    expect(ws).toMatchObject({ kind: 'final', text: '\n\n', keep: { content: [] } });
  });

  it('tool_use: run the calls; blank text before them is not kept', () => {
    const a = interpretReply(asst(text('\n\n'), use('t1'), use('t2')), 'tool_use');
    expect(a).toMatchObject({ kind: 'tools', calls: [{ id: 't1' }, { id: 't2' }] });
    expect(a.kind === 'tools' && a.keep.content).toEqual([use('t1'), use('t2')]);
  });

  it('calls under end_turn are still run (an unanswered tool_use would break the next request)', () => {
    expect(interpretReply(asst(use('t1')), 'end_turn')).toMatchObject({ kind: 'tools' });
  });

  it('max_tokens with a call: every call is answered with the cut-off error, none is run', () => {
    const a = interpretReply(asst(text('Doing it.'), use('t1'), use('t2', {})), 'max_tokens');
    expect(a).toEqual({
      kind: 'answer',
      keep: asst(text('Doing it.'), use('t1'), use('t2', {})),
      results: ['t1', 't2'].map((id) => ({ type: 'tool_result', tool_use_id: id, content: TRUNCATED_TOOL_CALL_MESSAGE, is_error: true })),
    });
  });

  it('pause_turn: continue with the reply kept', () => {
    expect(interpretReply(asst(text('Searching')), 'pause_turn')).toEqual({ kind: 'continue', keep: asst(text('Searching')) });
  });

  it('refusal: a typed error carrying what was said; nothing kept', () => {
    const a = interpretReply(asst(text('No.')), 'refusal');
    expect(a.kind).toBe('refusal');
    const err = (a as { error: ModelRefusalError }).error;
    expect(err).toBeInstanceOf(ModelRefusalError);
    expect(err).toMatchObject({ code: 'MODEL_REFUSAL', text: 'No.' });
  });

  it('model_context_window_exceeded: an overflow, even with a partial call in it', () => {
    expect(interpretReply(asst(text('par'), use('t1', {})), 'model_context_window_exceeded')).toMatchObject({ kind: 'overflow' });
  });

  it('keptEntry returns the same object when nothing is dropped', () => {
    const e = asst(text('x'), use('t1'));
    expect(keptEntry(e)).toBe(e);
  });
});

describe('toApiMessages never sends what the API refuses', () => {
  it('drops whitespace-only and empty text from resent assistant turns', () => {
    const entries: Entry[] = [{ type: 'user', text: 'a' }, asst(text('\n\n'), text(''), use('t1')), { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] }];
    expect(toApiMessages(entries)[1]).toEqual({ role: 'assistant', content: [use('t1')] });
    expect(valid(entries)).toBeUndefined();
    // Entries are not mutated.
    expect((entries[1] as AssistantEntry).content).toHaveLength(3);
  });

  it('leaves out an assistant entry with no content left, and merges the user turns around it', () => {
    const entries: Entry[] = [{ type: 'user', text: 'a' }, asst(), { type: 'user', text: 'b' }, asst(text(' ')), { type: 'user', text: 'c' }];
    expect(toApiMessages(entries)).toEqual([{ role: 'user', content: [text('a'), text('b'), text('c')] }]);
    expect(valid(entries)).toBeUndefined();
  });

  it('a final assistant turn (a paused turn sent back) loses trailing whitespace', () => {
    const entries: Entry[] = [{ type: 'user', text: 'a' }, asst(text('Searching\n\n'))];
    expect(toApiMessages(entries)[1]).toEqual({ role: 'assistant', content: [text('Searching')] });
    expect(valid(entries)).toBeUndefined();
  });

  it('the old conversion was refused by the fake (the rule is real)', () => {
    const raw = { model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [text('\n\n')] }, { role: 'user', content: 'b' }] };
    expect(validateMessagesRequest(raw)).toBe('messages: text content blocks must contain non-whitespace text');
  });
});
