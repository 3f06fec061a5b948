/** Session ids: `YYMMDD-adjective-noun` slugs from a given time and random source, and caller-chosen ids. */
import { InvalidInputError } from '../../src/core/errors';
import { seededRandom } from '../support/seeded-random';
import { SESSION_ID_PATTERN, SLUG_ADJECTIVES, SLUG_NOUNS, parseSessionId, sessionSlug } from '../../src/core/sessions';

/** Seeded, so the distribution test is the same on every run. */
const seeded = seededRandom;

const sequence = (...values: number[]) => {
  let i = 0;
  return () => values[i++ % values.length]!;
};

const afterEachRestore: Array<() => void> = [];
afterEach(() => afterEachRestore.splice(0).forEach((restore) => restore()));

describe('sessionSlug', () => {
  const jan11 = Date.UTC(2026, 0, 11, 9, 30);

  it('is YYMMDD-adjective-noun from the UTC date and the random draws', () => {
    expect(sessionSlug(jan11, sequence(0, 0))).toBe(`260111-${SLUG_ADJECTIVES[0]}-${SLUG_NOUNS[0]}`);
    expect(sessionSlug(jan11, sequence(0.9999999, 0.9999999))).toBe(`260111-${SLUG_ADJECTIVES.at(-1)}-${SLUG_NOUNS.at(-1)}`);
    const slug = sessionSlug(jan11, seeded(1));
    expect(slug).toMatch(/^260111-[a-z]+-[a-z]+$/);
    expect(slug).toMatch(SESSION_ID_PATTERN);
  });

  it('uses the UTC date, whatever the local time zone', () => {
    // Jest cannot switch the process's zone, so the local-time getters are made to read as in UTC+14,
    // where late in the UTC day the local date is already the next one.
    const ahead = (utcGetter: keyof Date) =>
      function (this: Date) {
        return (new Date(this.getTime() + 14 * 3_600_000)[utcGetter] as () => number)();
      };
    jest.spyOn(Date.prototype, 'getDate').mockImplementation(ahead('getUTCDate'));
    jest.spyOn(Date.prototype, 'getMonth').mockImplementation(ahead('getUTCMonth'));
    jest.spyOn(Date.prototype, 'getFullYear').mockImplementation(ahead('getUTCFullYear'));
    afterEachRestore.push(() => jest.restoreAllMocks());
    expect(new Date(Date.UTC(2025, 11, 31, 23, 59)).getFullYear()).toBe(2026); // the fake zone took effect
    expect(sessionSlug(Date.UTC(2025, 11, 31, 23, 59, 59, 999), sequence(0))).toMatch(/^251231-/);
    expect(sessionSlug(Date.UTC(2026, 0, 1, 0, 0, 0), sequence(0))).toMatch(/^260101-/);
    expect(sessionSlug(Date.UTC(2009, 8, 5), sequence(0))).toMatch(/^090905-/);
    expect(sessionSlug(Date.UTC(2100, 1, 28), sequence(0))).toMatch(/^000228-/);
  });

  it('is deterministic: the same time and draws give the same slug', () => {
    expect(sessionSlug(jan11, seeded(42))).toBe(sessionSlug(jan11, seeded(42)));
    expect(sessionSlug(jan11, seeded(42))).not.toBe(sessionSlug(jan11, seeded(43)));
  });

  it('draws every word, about evenly, and rarely repeats', () => {
    const random = seeded(7);
    const draws = 20_000;
    const adjectives = new Map<string, number>();
    const nouns = new Map<string, number>();
    const slugs = new Set<string>();
    for (let i = 0; i < draws; i++) {
      const slug = sessionSlug(jan11, random);
      slugs.add(slug);
      const [, adjective, noun] = slug.split('-');
      adjectives.set(adjective!, (adjectives.get(adjective!) ?? 0) + 1);
      nouns.set(noun!, (nouns.get(noun!) ?? 0) + 1);
    }
    expect(adjectives.size).toBe(SLUG_ADJECTIVES.length);
    expect(nouns.size).toBe(SLUG_NOUNS.length);
    const even = (counts: Map<string, number>, words: number) => {
      const expected = draws / words;
      expect(Math.min(...counts.values())).toBeGreaterThan(expected * 0.6);
      expect(Math.max(...counts.values())).toBeLessThan(expected * 1.4);
    };
    even(adjectives, SLUG_ADJECTIVES.length);
    even(nouns, SLUG_NOUNS.length);
    // With ≥ 10,000 combinations, 20,000 draws should give well over half distinct slugs.
    expect(slugs.size).toBeGreaterThan(draws * 0.5);
  });

  it('has at least 100 short, lowercase, distinct words of each kind', () => {
    for (const words of [SLUG_ADJECTIVES, SLUG_NOUNS]) {
      expect(words.length).toBeGreaterThanOrEqual(100);
      expect(new Set(words).size).toBe(words.length);
      for (const w of words) expect(w).toMatch(/^[a-z]{2,8}$/);
    }
    expect(SLUG_ADJECTIVES.filter((w) => SLUG_NOUNS.includes(w))).toEqual([]);
  });

  it('keeps a random source that strays outside [0, 1) inside the word lists', () => {
    expect(sessionSlug(jan11, () => 1)).toBe(`260111-${SLUG_ADJECTIVES.at(-1)}-${SLUG_NOUNS.at(-1)}`);
    expect(sessionSlug(jan11, () => -3)).toBe(`260111-${SLUG_ADJECTIVES[0]}-${SLUG_NOUNS[0]}`);
    expect(sessionSlug(jan11, () => NaN)).toBe(`260111-${SLUG_ADJECTIVES[0]}-${SLUG_NOUNS[0]}`);
  });

  it('refuses a time that is not a finite number, or a random source that is not a function', () => {
    for (const bad of [NaN, Infinity, '2026-01-11', undefined]) {
      expect(() => sessionSlug(bad as number, Math.random)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field: 'nowMs' }));
    }
    expect(() => sessionSlug(jan11, 0.5 as unknown as () => number)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field: 'random' }));
  });
});

describe('parseSessionId', () => {
  it('accepts slugs and caller-chosen ids of 1-100 characters a-z, 0-9 and -', () => {
    for (const id of ['260111-swift-river', 'a', '0', 'my-session-2', 'a'.repeat(100), 'x--y-']) expect(parseSessionId(id)).toBe(id);
  });

  it.each([
    ['empty', ''],
    ['upper case', 'My-Session'],
    ['leading hyphen', '-abc'],
    ['underscore', 'a_b'],
    ['space', 'a b'],
    ['path', '../etc'],
    ['slash', 'a/b'],
    ['101 characters', 'a'.repeat(101)],
    ['trailing newline', 'abc\n'],
    ['number', 42],
    ['null', null],
    ['undefined', undefined],
    ['object', { id: 'abc' }],
  ])('refuses %s with INVALID_INPUT naming id', (_what, id) => {
    let error: unknown;
    try {
      parseSessionId(id);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'INVALID_INPUT', field: 'id' });
    expect((error as Error).message).toMatch(/id/);
  });
});
