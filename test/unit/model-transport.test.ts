/**
 * The model transport: what travels to the model activity. Only what was added since the last stored
 * transcript goes in full; a rewritten history (a new array) or a rolled-back prompt (the array cut
 * back) never reuses a stored transcript that is no longer a prefix of the conversation.
 */
import type { AssistantEntry, Entry } from '../../src/core/entries';
import type { ModelCallRequest } from '../../src/core/ports';
import { ModelTransport } from '../../src/workflows/model-transport';

const user = (text: string): Entry => ({ type: 'user', text });
const reply = (text: string): AssistantEntry => ({ type: 'assistant', content: [{ type: 'text', text }] });
const req = (entries: Entry[], extra: Partial<ModelCallRequest> = {}): ModelCallRequest => ({
  sessionId: 's',
  model: 'm',
  maxTokens: 100,
  system: 'sys',
  tools: [],
  entries,
  ...extra,
});

/** A model call: the transport builds the input, the "activity" stores entries + reply as `count`. */
function call(t: ModelTransport, entries: Entry[], answer: string) {
  const r = req(entries);
  const input = t.input(r, true);
  const out = reply(answer);
  t.called(r, input, { head: `h${entries.length + 1}`, count: entries.length + 1 }, out);
  entries.push(out);
  return input;
}

describe('ModelTransport', () => {
  it('sends the whole conversation and the prelude first, then a reference plus the delta and the prelude by hash', () => {
    const t = new ModelTransport();
    const entries: Entry[] = [user('a')];
    const first = call(t, entries, 'A');
    expect(first.base).toBeNull();
    expect(first.delta).toEqual([user('a')]);
    expect(first.prelude.value).toEqual({ system: 'sys', tools: [] });
    entries.push(user('b'));
    const second = call(t, entries, 'B');
    expect(second.base).toEqual({ head: 'h2', count: 2 });
    expect(second.delta).toEqual([user('b')]);
    expect(second.prelude).toEqual({ hash: first.prelude.hash });
  });

  it('hands out an unsent prelude to store first; once stored, the first call carries only its hash', () => {
    const t = new ModelTransport();
    const r = req([user('a')]);
    const unsent = t.unsentPrelude(r)!;
    expect(unsent.value).toEqual({ system: 'sys', tools: [] });
    t.preludeStored(unsent.hash);
    expect(t.unsentPrelude(r)).toBeUndefined();
    expect(t.input(r, true).prelude).toEqual({ hash: unsent.hash });
    // Without references (a worker whose store lacks it) the value travels again.
    expect(t.input(r, false).prelude.value).toEqual({ system: 'sys', tools: [] });
    // Another prelude is unsent until stored.
    expect(t.unsentPrelude(req([user('a')], { system: 'other' }))).toBeDefined();
  });

  it('a new array (history rewritten by compaction) starts from nothing', () => {
    const t = new ModelTransport();
    const entries: Entry[] = [user('a')];
    call(t, entries, 'A');
    const rewritten: Entry[] = [{ type: 'summary', summary: 'S' } as Entry, ...entries.slice(1), user('b')];
    const input = t.input(req(rewritten), true);
    expect(input.base).toBeNull();
    expect(input.delta).toHaveLength(rewritten.length);
  });

  it('after a rolled-back prompt (the array cut back in place) falls back to the stored prefix that still holds', () => {
    const t = new ModelTransport();
    const entries: Entry[] = [user('a')];
    call(t, entries, 'A'); // stored: 2 entries
    const mark = entries.length;
    entries.push(user('failing prompt'));
    call(t, entries, 'tool use'); // stored: 4 entries
    entries.push(user('tool result'));
    entries.length = mark; // the prompt failed: rolled back
    entries.push(user('next prompt'), user('x')); // as long as before, different entries
    const input = t.input(req(entries), true);
    // The 4-entry transcript would fit by count but is no prefix any more: the 2-entry one is used.
    expect(input.base).toEqual({ head: 'h2', count: 2 });
    expect(input.delta).toEqual([user('next prompt'), user('x')]);
  });

  it('without references (a worker whose store lacks them) sends everything, tool results included', () => {
    const t = new ModelTransport();
    const entries: Entry[] = [user('a')];
    call(t, entries, 'A');
    t.toolResultStored('tu1', 'ref-1');
    entries.push({ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'long output' }] });
    const byRef = t.input(req(entries), true);
    expect(byRef.delta).toEqual([{ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 'tu1', content: '', contentRef: 'ref-1' }] }]);
    const whole = t.input(req(entries), false);
    expect(whole.base).toBeNull();
    expect(whole.prelude.value).toBeDefined();
    expect(whole.delta.at(-1)).toEqual(entries.at(-1));
  });

  it('keeps sessions apart', () => {
    const t = new ModelTransport();
    const a: Entry[] = [user('a')];
    call(t, a, 'A');
    const b: Entry[] = [user('b')];
    expect(t.input(req(b, { sessionId: 'other' }), true).base).toBeNull();
  });
});
