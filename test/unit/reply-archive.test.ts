import { BLOOM_BITS, bloomAdd, bloomMayHave } from '../../src/core/sessions/reply-archive';

describe('the reply archive filter', () => {
  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

  it('never forgets an id it was given (no false negatives), across several additions', () => {
    let bloom: string | undefined;
    const added: string[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const more = ids(`run${batch}`, 500);
      bloom = bloomAdd(bloom, more);
      added.push(...more);
    }
    expect(added.filter((id) => !bloomMayHave(bloom!, id))).toEqual([]);
  });

  it('is a fixed size, and says "certainly not" for most unknown ids at 1,000 archived', () => {
    const bloom = bloomAdd(undefined, ids('known', 1_000));
    expect(bloom.length).toBe(Math.ceil(BLOOM_BITS / 8 / 3) * 4);
    const unknown = ids('unknown', 10_000).filter((id) => bloomMayHave(bloom, id)).length;
    expect(unknown).toBeLessThan(50); // about 6 expected (1 in 1,600)
    expect(bloomAdd(bloom, ids('more', 5_000)).length).toBe(bloom.length);
  });

  it('an empty filter holds nothing', () => {
    const empty = bloomAdd(undefined, []);
    expect(ids('x', 100).some((id) => bloomMayHave(empty, id))).toBe(false);
  });
});
