/** Capping oversized tool results: head and tail kept, a marker between, always within the cap. */
import fc from 'fast-check';
import { capToolResult, truncationMarker } from '../../src/core/context/cap';
import { InvalidToolResultOptionsError } from '../../src/core/context/errors';
import { estimateToolResultTokens } from '../../src/core/tokens';

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i}: some output text here`).join('\n');

describe('capToolResult', () => {
  it('leaves a result within the cap as it is', () => {
    const content = lines(10);
    expect(capToolResult(content, { maxTokens: 1000 })).toEqual({ content, truncated: false, omittedTokens: 0 });
  });

  it('keeps the head and the tail on line boundaries with the marker between, within the cap', () => {
    const content = lines(2000); // ≈ 17k tokens
    const r = capToolResult(content, { maxTokens: 500 });
    expect(r.truncated).toBe(true);
    expect(estimateToolResultTokens(r.content)).toBeLessThanOrEqual(500);
    expect(r.content.startsWith('line 0: ')).toBe(true);
    expect(r.content.endsWith('line 1999: some output text here')).toBe(true); // the verdict end survives
    const m = /\n\[truncated, (\d+) tokens omitted\]\n/.exec(r.content);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBe(r.omittedTokens);
    const [head, tail] = r.content.split(m![0]);
    // Whole lines on both sides, the head longer than the tail.
    expect(content.startsWith(head! + '\n')).toBe(true);
    expect(content.endsWith('\n' + tail!)).toBe(true);
    expect(head!.length).toBeGreaterThan(tail!.length);
    // The omitted part is what the marker says.
    const omitted = content.slice(head!.length + 1, content.length - tail!.length - 1);
    expect(estimateToolResultTokens(omitted)).toBe(r.omittedTokens);
  });

  it('names where the full output can be read back', () => {
    const r = capToolResult(lines(2000), { maxTokens: 500, ref: 'abc123' });
    expect(r.content).toContain('[truncated, ');
    expect(r.content).toContain('\n[full output: read_artifact({"ref":"abc123","offset":0})]\n');
    expect(estimateToolResultTokens(r.content)).toBeLessThanOrEqual(500);
    expect(truncationMarker(7)).toBe('\n[truncated, 7 tokens omitted]\n');
  });

  it('base64-heavy output (estimated at 1.5 chars a token) is capped within the cap too', () => {
    const b64 = 'QUJD'.repeat(20_000); // 80k chars, dense
    // Kept parts under 20k chars estimate as prose; at 8000 tokens they are dense again and must shrink.
    for (const maxTokens of [1000, 8000, 13_000]) {
      const r = capToolResult(b64, { maxTokens });
      expect(r.truncated).toBe(true);
      expect(estimateToolResultTokens(r.content)).toBeLessThanOrEqual(maxTokens);
      expect(r.content.length).toBeLessThan(b64.length);
      // …and still uses the budget: a head and a tail, not a bare marker.
      expect(estimateToolResultTokens(r.content)).toBeGreaterThan(maxTokens * 0.3);
      expect(r.content.startsWith('QUJD')).toBe(true);
    }
  });

  it('never splits a surrogate pair', () => {
    const content = '😀'.repeat(5000);
    const r = capToolResult(content, { maxTokens: 200 });
    expect(r.truncated).toBe(true);
    expect(r.content).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it('refuses a cap too small to hold the marker, naming the option', () => {
    expect(() => capToolResult('x', { maxTokens: 10 })).toThrow(InvalidToolResultOptionsError);
    expect(() => capToolResult('x', { maxTokens: 150.5 })).toThrow(/maxTokens/);
  });

  it('property: within the cap, shorter than the original, head is a prefix and tail a suffix', () => {
    const content = fc.oneof(
      fc.string({ maxLength: 3000 }),
      fc.tuple(fc.string({ minLength: 1, maxLength: 50 }), fc.integer({ min: 1, max: 600 })).map(([s, n]) => s.repeat(n)),
      fc.integer({ min: 15_000, max: 40_000 }).map((n) => 'QUJD'.repeat(n / 4) + '\n' + 'plain text '.repeat(50)),
    );
    fc.assert(
      fc.property(content, fc.integer({ min: 100, max: 12_000 }), fc.option(fc.stringMatching(/^[0-9a-f]{1,64}$/), { nil: undefined }), (c, maxTokens, ref) => {
        const r = capToolResult(c, ref === undefined ? { maxTokens } : { maxTokens, ref });
        if (estimateToolResultTokens(c) <= maxTokens) {
          expect(r).toEqual({ content: c, truncated: false, omittedTokens: 0 });
          return;
        }
        expect(r.truncated).toBe(true);
        expect(estimateToolResultTokens(r.content)).toBeLessThanOrEqual(maxTokens);
        expect(r.content.length).toBeLessThan(c.length);
        const marker = truncationMarker(r.omittedTokens, ref);
        const at = r.content.indexOf(marker);
        expect(at).toBeGreaterThanOrEqual(0);
        const head = r.content.slice(0, at);
        const tail = r.content.slice(at + marker.length);
        expect(c.startsWith(head)).toBe(true);
        expect(c.endsWith(tail)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
