import { Lru } from '../../src/core/lru';

describe('Lru', () => {
  it('keeps the most recently used entries up to its capacity', () => {
    const lru = new Lru<string, number>(2, 'test cache size');
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3); // drops b
    expect([lru.get('a'), lru.get('b'), lru.get('c'), lru.size]).toEqual([1, undefined, 3, 2]);
    lru.set('a', 4); // a replaced, not duplicated
    expect([lru.get('a'), lru.size]).toEqual([4, 2]);
    lru.delete('a');
    expect([lru.get('a'), lru.size]).toEqual([undefined, 1]);
  });

  it('capacity 0 keeps nothing; a bad capacity names its setting', () => {
    const none = new Lru<string, number>(0, 'x');
    none.set('a', 1);
    expect([none.get('a'), none.size]).toEqual([undefined, 0]);
    expect(() => new Lru(1.5, 'preludes cache size')).toThrow('preludes cache size must be a non-negative integer, got 1.5');
    expect(() => new Lru(-1, 'x')).toThrow(RangeError);
  });
});
