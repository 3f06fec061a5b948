/**
 * The addresses a board answers to. The guard accepts a request only when its Host (and, for a change,
 * its Origin) is one of them: that is what defeats DNS rebinding. From the bind address alone the board
 * knows only its loopback names, or the literal address it was bound to (`0.0.0.0` for "every
 * interface", which no browser on another machine uses). So the user names the URLs the board is really
 * reached at (`publicUrl`, `fh board --public-url`): the machine's IP or DNS name, or a reverse proxy's.
 */
import { InvalidInputError } from '../core/errors';

/** Host header values (host[:port]) and Origins (scheme://host[:port]) the guard lets through. */
export interface BoardAddresses {
  hosts: Set<string>;
  origins: Set<string>;
}

const EXAMPLE = 'e.g. http://192.168.1.20:8787 or https://board.example.com';

/**
 * Checks each public URL: http or https, a host, nothing but `/` after it (no path, query, fragment or
 * credentials: it names where the board is, not a page on it). Throws INVALID_INPUT naming `field`
 * (`publicUrl`, or `publicUrl[i]` in a list).
 */
export function parsePublicUrls(value: string | readonly string[] | undefined, field = 'publicUrl'): URL[] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) throw invalid(field, `must be a URL or a list of URLs (${EXAMPLE})`);
  return list.map((raw, i) => {
    const name = typeof value === 'string' ? field : `${field}[${i}]`;
    if (typeof raw !== 'string') throw invalid(name, `must be a string URL (${EXAMPLE})`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw invalid(name, `'${raw}' is not a URL (${EXAMPLE})`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(name, `'${raw}' must be http:// or https:// (${EXAMPLE})`);
    if (!url.hostname) throw invalid(name, `'${raw}' has no host (${EXAMPLE})`);
    if (url.username || url.password) throw invalid(name, `'${raw}' must not carry credentials (the board's token is its credential)`);
    if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
      throw invalid(name, `'${raw}' must be the board's root, with no path, query or fragment (${EXAMPLE})`);
    }
    return url;
  });
}

/**
 * What the guard accepts for a board bound to `host:port`: its own names (all three loopback names for
 * a loopback board, else the bind address as written), plus each public URL's host and origin. A public
 * URL's port is its own (a proxy may listen on 443 for a board on 8787); without one it is the
 * scheme's default, which browsers leave out of Host and Origin, as URL.host and URL.origin do.
 */
export function boardAddresses(host: string, port: number, loopback: boolean, publicUrls: readonly URL[]): BoardAddresses {
  const hosts = new Set<string>();
  const origins = new Set<string>();
  const names = loopback ? ['127.0.0.1', 'localhost', '[::1]'] : [host.includes(':') ? `[${host}]` : host];
  for (const n of names) {
    hosts.add(`${n}:${port}`.toLowerCase());
    origins.add(`http://${n}:${port}`.toLowerCase());
  }
  for (const url of publicUrls) {
    hosts.add(url.host.toLowerCase());
    origins.add(url.origin.toLowerCase());
  }
  return { hosts, origins };
}

function invalid(field: string, message: string): InvalidInputError {
  return new InvalidInputError('board options', field, [{ path: field, message }]);
}
