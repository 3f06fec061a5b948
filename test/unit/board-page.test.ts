/**
 * The board's page script and request guard, without a browser: the script is self-contained (it runs
 * from its own source text) and never turns a string into markup; the guard compares tokens whole and
 * refuses changes that lack the custom header or come from another origin.
 */
import type { IncomingMessage } from 'node:http';
import { pageScript } from '../../src/board/page/script';
import { flowsScript } from '../../src/board/page/flows';
import { pageHtml } from '../../src/board/page/assets';
import { refusal, tokenMatches } from '../../src/board/guard';

describe('the board page', () => {
  const script = pageScript();

  const flows = flowsScript();

  it('never builds markup from strings, never evaluates code and sets no URL from data', () => {
    for (const [name, text] of [['app.js', script], ['flows.js', flows]] as const) {
      for (const sink of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function', 'DOMParser', 'createContextualFragment', '.href', '.src =', 'xlink:href', "'href'"]) {
        expect({ name, sink, found: text.includes(sink) }).toEqual({ name, sink, found: false });
      }
    }
  });

  it('is a self-contained expression that parses as a script', () => {
    expect(() => new Function(script)).not.toThrow();
    expect(script.startsWith('(function boardPage()')).toBe(true);
    expect(() => new Function(flows)).not.toThrow();
    expect(flows.startsWith('(function flowsPage()')).toBe(true);
  });

  it('has no inline script or style in its HTML, and escapes what it puts in attributes', () => {
    const html = pageHtml('tok"en', '<ns>');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son\w+=/);
    expect(html).toContain('data-token="tok&#34;en"');
    expect(html).toContain('&#60;ns&#62;');
  });
});

describe('the board guard', () => {
  const opts = { token: 'a-token-of-enough-length', hosts: new Set(['127.0.0.1:9']), origins: new Set(['http://127.0.0.1:9']) };
  const req = (method: string, headers: Record<string, string>) => ({ method, headers: { host: '127.0.0.1:9', ...headers } }) as unknown as IncomingMessage;
  const url = (q = '') => new URL(`http://127.0.0.1:9/api/sessions${q}`);

  it('matches only the whole token', () => {
    expect(tokenMatches('a-token-of-enough-length', opts.token)).toBe(true);
    expect(tokenMatches('a-token-of-enough-lengtH', opts.token)).toBe(false);
    expect(tokenMatches('a-token', opts.token)).toBe(false);
    expect(tokenMatches('', opts.token)).toBe(false);
    expect(tokenMatches(undefined, opts.token)).toBe(false);
  });

  it('lets a read through with the token in the URL or the header, and refuses it without', () => {
    expect(refusal(req('GET', {}), url(`?token=${opts.token}`), opts)).toBeUndefined();
    expect(refusal(req('GET', { 'x-fh-board-token': opts.token }), url(), opts)).toBeUndefined();
    expect(refusal(req('GET', {}), url(), opts)?.status).toBe(401);
    expect(refusal(req('GET', { host: 'evil.example:9' }), url(`?token=${opts.token}`), opts)?.status).toBe(421);
  });

  it('refuses a change without the token header, without the custom header, or from another origin', () => {
    const ok = { 'x-fh-board-token': opts.token, 'x-fh-board': '1' };
    expect(refusal(req('POST', ok), url(), opts)).toBeUndefined();
    expect(refusal(req('POST', { ...ok, origin: 'http://127.0.0.1:9' }), url(), opts)).toBeUndefined();
    expect(refusal(req('POST', { 'x-fh-board': '1' }), url(`?token=${opts.token}`), opts)?.status).toBe(403);
    expect(refusal(req('POST', { 'x-fh-board-token': opts.token }), url(), opts)?.status).toBe(403);
    expect(refusal(req('POST', { ...ok, origin: 'http://localhost.evil:9' }), url(), opts)?.status).toBe(403);
    expect(refusal(req('POST', { ...ok, 'sec-fetch-site': 'same-site' }), url(), opts)?.status).toBe(403);
  });
});
