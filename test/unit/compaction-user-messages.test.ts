import { carryUserMessages } from '../../src/core/context/compaction/user-messages';
import { estimateTextTokens } from '../../src/core/tokens';
import { say, user } from './compaction-helpers';

describe('carryUserMessages', () => {
  it('carries user messages verbatim, newest first, then earlier carried ones', () => {
    const out = carryUserMessages([user('first'), say('ok'), user('second')], ['older', 'oldest'], 2000);
    expect(out).toEqual(['second', 'first', 'older', 'oldest']);
  });

  it('stops at the budget, keeping the newest contiguous run', () => {
    const m = (c: string) => c.repeat(400); // 100 tokens each
    const out = carryUserMessages([user(m('a')), user(m('b')), user(m('c'))], [], 1000);
    expect(out).toEqual([m('c'), m('b'), m('a')]);
    // Budget 250: the newest may take 125 tokens, older ones 64 each (heads with a marker).
    const few = carryUserMessages([user('older'), user(m('d')), user(m('a')), user(m('b')), user(m('c'))], [], 250);
    expect(few[0]).toBe(m('c'));
    expect(few.slice(1).map((t) => t[0])).toEqual(['b', 'a']); // 'd' would not fit after them, so neither does 'older'
    for (const t of few.slice(1)) expect(t).toMatch(/…\[truncated \d+ chars\]$/);
  });

  it('cuts the newest message to half the budget, keeping room for older instructions', () => {
    const huge = 'z'.repeat(40_000); // 10,000 tokens
    const out = carryUserMessages([user('small'), user(huge)], [], 2000);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^z+…\[truncated \d+ chars\]$/);
    expect(estimateTextTokens(out[0]!)).toBeLessThanOrEqual(1000);
    expect(out[1]).toBe('small');
  });

  it('a pasted log in the middle does not crowd out older instructions', () => {
    const log = 'ERROR at line 1\n'.repeat(2_000); // ~8,000 tokens
    const out = carryUserMessages([user('Always use tabs.'), user(log), user('Fix the build.')], [], 2000);
    expect(out[0]).toBe('Fix the build.');
    expect(out[1]).toMatch(/^ERROR at line 1[\s\S]*…\[truncated \d+ chars\]$/);
    expect(estimateTextTokens(out[1]!)).toBeLessThanOrEqual(250);
    expect(out[2]).toBe('Always use tabs.');
  });

  it('defaults to a 2,000-token budget and handles an empty budget', () => {
    const many = Array.from({ length: 12 }, (_, i) => user(`${i}`.repeat(800))); // 200 tokens each: 8 fit
    expect(carryUserMessages(many, [])).toHaveLength(8);
    expect(carryUserMessages([user('x')], [], 0)).toEqual([]);
  });
});
