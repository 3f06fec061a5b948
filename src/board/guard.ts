/**
 * The board's request guard, checked before any route: the access token on every request (assets and
 * the event stream too), compared in constant time; the Host header (a board answers only to its own
 * names and the public URLs it was given, which defeats DNS rebinding: see public-url.ts); and for
 * anything that changes state, a custom header plus an Origin check, so a page on another site can
 * neither send nor read a change.
 */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const TOKEN_HEADER = 'x-fh-board-token';
/** Browsers send a custom header cross-site only after a CORS preflight, which the board never grants. */
export const CSRF_HEADER = 'x-fh-board';

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Constant-time: both sides are hashed first, so neither the content nor the length leaks through timing. */
export function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

export type Refusal = { status: number; message: string };

export interface GuardOptions {
  token: string;
  /** Host header values this board answers to (host:port). */
  hosts: Set<string>;
  /** Origins allowed to send state-changing requests (http://host:port). */
  origins: Set<string>;
}

/** Why this request is refused, or undefined to let it through. */
export function refusal(req: IncomingMessage, url: URL, opts: GuardOptions): Refusal | undefined {
  const host = req.headers.host;
  if (!host || !opts.hosts.has(host.toLowerCase())) return { status: 421, message: 'unknown Host: open the board by the URL it printed' };
  const header = req.headers[TOKEN_HEADER];
  const given = typeof header === 'string' ? header : (url.searchParams.get('token') ?? undefined);
  if (!tokenMatches(given, opts.token)) return { status: 401, message: 'missing or wrong token: open the board by the URL it printed (it carries ?token=…)' };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    // The token must come in the header for a change, never only in the URL (which can leak, e.g. in logs).
    if (typeof header !== 'string') return { status: 403, message: `a change needs the ${TOKEN_HEADER} header` };
    if (req.headers[CSRF_HEADER] !== '1') return { status: 403, message: `a change needs the ${CSRF_HEADER}: 1 header` };
    const origin = req.headers.origin;
    if (origin !== undefined && !opts.origins.has(origin)) return { status: 403, message: `cross-origin request refused (Origin ${origin})` };
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return { status: 403, message: `cross-site request refused (${String(site)})` };
  }
  return undefined;
}

/** Security headers on every answer: a strict CSP (no inline script, nothing from elsewhere), no framing, no referrer. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};
