import { canonicalJson, chainHash, hashEntry, hashString } from '../../src/core/hash';
import { user } from './compaction-helpers';

describe('hash', () => {
  it('is a stable 16-hex-char digest', () => {
    expect(hashString('')).toMatch(/^[0-9a-f]{16}$/);
    expect(hashString('hello')).toBe(hashString('hello'));
    // Pinned: the digest must not change across releases (it addresses stored transcripts).
    expect(hashString('hello')).toMatchInlineSnapshot(`"bfb06f3a63cd7226"`);
  });

  it('differs for different inputs, including near-identical ones', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) seen.add(hashString(`entry-${i}`));
    expect(seen.size).toBe(5000);
    expect(hashString('ab')).not.toBe(hashString('ba'));
  });

  it('canonical JSON sorts keys and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[1,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson('x')).toBe('"x"');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('hashEntry ignores key order; chainHash depends on order', () => {
    const a = { type: 'user', text: 'hi' } as const;
    const b = JSON.parse('{"text":"hi","type":"user"}');
    expect(hashEntry(a)).toBe(hashEntry(b));
    expect(hashEntry(user('hi'))).not.toBe(hashEntry(user('hi ')));
    const h1 = hashEntry(user('1'));
    const h2 = hashEntry(user('2'));
    expect(chainHash(chainHash('', h1), h2)).not.toBe(chainHash(chainHash('', h2), h1));
    expect(chainHash('p', h1)).toBe(chainHash('p', h1));
  });
});
