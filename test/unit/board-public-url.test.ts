/**
 * The addresses a board answers to: `publicUrl` is checked (a typed error naming the field), adds its
 * Host and Origin to the bind address's, and leaves every other refusal of the guard in place.
 */
import type { IncomingMessage } from 'node:http';
import { board } from '../../src/board';
import type { BoardSource } from '../../src/board/source';
import { refusal } from '../../src/board/guard';
import { boardAddresses, parsePublicUrls } from '../../src/board/public-url';
import { InvalidInputError } from '../../src/core/errors';

/** A source that is never asked anything: these tests stop at the options or the guard. */
const source = { namespace: 'ns' } as unknown as BoardSource;

async function invalid(publicUrl: unknown): Promise<{ code: string; field: string; message: string }> {
  const err = await board({ source, publicUrl: publicUrl as string }).then(
    async (s) => {
      await s.close();
      throw new Error(`accepted ${JSON.stringify(publicUrl)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidInputError);
  const e = err as InvalidInputError;
  return { code: e.code, field: e.field, message: e.message };
}

describe('board publicUrl', () => {
  it('refuses a malformed URL with INVALID_INPUT naming the field (and the entry of a list)', async () => {
    expect(await invalid('not a url')).toMatchObject({ code: 'INVALID_INPUT', field: 'publicUrl', message: expect.stringContaining("'not a url' is not a URL") });
    expect(await invalid('ftp://devbox:21')).toMatchObject({ field: 'publicUrl', message: expect.stringContaining('must be http:// or https://') });
    expect(await invalid('http://devbox:8787/board')).toMatchObject({ field: 'publicUrl', message: expect.stringContaining('no path, query or fragment') });
    expect(await invalid('http://devbox:8787/?token=x')).toMatchObject({ field: 'publicUrl' });
    expect(await invalid('http://user:pw@devbox:8787')).toMatchObject({ field: 'publicUrl', message: expect.stringContaining('credentials') });
    expect(await invalid(['http://fine:8787', 'http://devbox:8787/x'])).toMatchObject({ field: 'publicUrl[1]' });
    expect(await invalid([42])).toMatchObject({ field: 'publicUrl[0]' });
    expect(await invalid(7)).toMatchObject({ field: 'publicUrl' });
  });

  it('takes one URL or several, http or https, with or without a port', () => {
    expect(parsePublicUrls(undefined)).toEqual([]);
    expect(parsePublicUrls('http://192.168.1.20:8787/').map((u) => u.host)).toEqual(['192.168.1.20:8787']);
    expect(parsePublicUrls(['http://devbox.lan:8787', 'https://Board.Example.com']).map((u) => u.origin)).toEqual(['http://devbox.lan:8787', 'https://board.example.com']);
  });

  it("adds each public URL's Host and Origin to the bind address's; the guard still refuses the rest", () => {
    const port = 8787;
    const { hosts, origins } = boardAddresses('0.0.0.0', port, false, parsePublicUrls(['http://127.0.0.2:8787', 'https://board.example.com']));
    expect([...hosts].sort()).toEqual(['0.0.0.0:8787', '127.0.0.2:8787', 'board.example.com']);
    expect([...origins].sort()).toEqual(['http://0.0.0.0:8787', 'http://127.0.0.2:8787', 'https://board.example.com']);
    const opts = { token: 'a-token-of-enough-length', hosts, origins };
    const req = (method: string, headers: Record<string, string>) => ({ method, headers }) as unknown as IncomingMessage;
    const url = (q = '') => new URL(`http://x/api/sessions${q}`);
    const change = { 'x-fh-board-token': opts.token, 'x-fh-board': '1' };
    // Served: by each public name, a read with the token and a change from the board's own origin.
    expect(refusal(req('GET', { host: '127.0.0.2:8787' }), url(`?token=${opts.token}`), opts)).toBeUndefined();
    expect(refusal(req('GET', { host: 'BOARD.example.com' }), url(`?token=${opts.token}`), opts)).toBeUndefined();
    expect(refusal(req('POST', { host: '127.0.0.2:8787', origin: 'http://127.0.0.2:8787', ...change }), url(), opts)).toBeUndefined();
    expect(refusal(req('POST', { host: 'board.example.com', origin: 'https://board.example.com', ...change }), url(), opts)).toBeUndefined();
    // Refused: a Host not named, the same name on another port, no token, another Origin, no CSRF header.
    expect(refusal(req('GET', { host: '127.0.0.1:8787' }), url(`?token=${opts.token}`), opts)?.status).toBe(421);
    expect(refusal(req('GET', { host: 'board.example.com:8443' }), url(`?token=${opts.token}`), opts)?.status).toBe(421);
    expect(refusal(req('GET', { host: '127.0.0.2:8787' }), url(), opts)?.status).toBe(401);
    expect(refusal(req('POST', { host: '127.0.0.2:8787', origin: 'http://127.0.0.1:8787', ...change }), url(), opts)?.status).toBe(403);
    expect(refusal(req('POST', { host: '127.0.0.2:8787', origin: 'http://board.example.com', ...change }), url(), opts)?.status).toBe(403);
    expect(refusal(req('POST', { host: '127.0.0.2:8787', 'x-fh-board-token': opts.token }), url(), opts)?.status).toBe(403);
  });

  it('keeps a loopback board to its loopback names when no public URL is given', () => {
    const { hosts } = boardAddresses('127.0.0.1', 9, true, []);
    expect([...hosts].sort()).toEqual(['127.0.0.1:9', '[::1]:9', 'localhost:9']);
  });
});
