import { carryUserMessages } from '../../src/core/compaction/user-messages';
import { estimateTextTokens } from '../../src/core/tokens';
import { say, user } from './compaction-helpers';

describe('carryUserMessages', () => {
  it('carries user messages verbatim, newest first, then earlier carried ones', () => {
    const out = carryUserMessages([user('first'), say('ok'), user('second')], ['older', 'oldest'], 2000);
    expect(out).toEqual(['second', 'first', 'older', 'oldest']);
  });

  it('stops at the budget, keeping the newest contiguous run', () => {
    const m = (c: string) => c.repeat(400); // 100 tokens each
    const out = carryUserMessages([user(m('a')), user(m('b')), user(m('c'))], [], 250);
    expect(out).toEqual([m('c'), m('b')]);
  });

  it('cuts the newest message with a marker rather than dropping it', () => {
    const huge = 'z'.repeat(40_000); // 10,000 tokens
    const out = carryUserMessages([user('small'), user(huge)], [], 2000);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^z+…\[truncated \d+ chars\]$/);
    expect(estimateTextTokens(out[0]!)).toBeLessThanOrEqual(2000);
  });

  it('defaults to a 2,000-token budget and handles an empty budget', () => {
    expect(carryUserMessages([user('x'.repeat(7900)), user('y'.repeat(100))], [])).toHaveLength(2);
    expect(carryUserMessages([user('x'.repeat(8000)), user('y'.repeat(100))], [])).toHaveLength(1);
    expect(carryUserMessages([user('x')], [], 0)).toEqual([]);
  });
});
