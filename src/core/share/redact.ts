/**
 * What a shared page hides (the documented rule, docs/ecosystem.md#sharing-a-session):
 *
 * 1. Secrets, replaced by `[redacted]`: private key blocks (`-----BEGIN … PRIVATE KEY-----` to its END
 *    line); API tokens by their shape — Anthropic `sk-ant-…`, OpenAI-style `sk-…`, GitHub `ghp_/gho_/ghu_/
 *    ghs_/ghr_…` and `github_pat_…`, Slack `xox?-…`, AWS access key ids `AKIA…`, Google `AIza…`, JWTs
 *    `eyJ….….…`; `Bearer <token>` and `Basic <token>` credentials; and the value of any `NAME=value`,
 *    `NAME: value` or `"name": "value"` whose name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, PWD,
 *    CREDENTIAL or AUTH (any case).
 * 2. Paths: the session's working directory (and every extra path given, e.g. the store) becomes
 *    `<workdir>` (`<path>` for the extras), then the home directory becomes `~`.
 *
 * Redaction is by pattern: it catches the common shapes, not every secret a conversation may hold.
 */
export interface RedactOptions {
  /** The sandbox directory: replaced by `<workdir>`. */
  workdir?: string;
  /** Other paths to hide (replaced by `<path>`). */
  paths?: string[];
  /** The home directory: replaced by `~`. */
  home?: string;
}

export const REDACTED = '[redacted]';

const TOKEN_SHAPES: RegExp[] = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  /\bsk-ant-[A-Za-z0-9_-]{8,}/g,
  /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}/g,
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];
const SCHEME_CREDENTIAL = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
const SECRET_NAME = '[A-Za-z0-9_.-]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|CREDENTIAL|AUTH)[A-Za-z0-9_.-]*';
/** NAME=value / NAME: value (value up to whitespace, quote or comma), and "name": "value". */
const NAMED_VALUE = new RegExp(`(\\b${SECRET_NAME}\\s*[=:]\\s*)(?!\\[redacted\\]|(?:Bearer|Basic)\\s)(["']?)([^\\s"',;]{4,})\\2`, 'gi');
const JSON_VALUE = new RegExp(`("${SECRET_NAME}"\\s*:\\s*")([^"]{4,})(")`, 'gi');

export function redactText(text: string, options: RedactOptions = {}): string {
  let out = text;
  for (const re of TOKEN_SHAPES) out = out.replace(re, REDACTED);
  out = out.replace(SCHEME_CREDENTIAL, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  out = out.replace(JSON_VALUE, (_m, head: string, _v: string, tail: string) => `${head}${REDACTED}${tail}`);
  out = out.replace(NAMED_VALUE, (_m, head: string, quote: string) => `${head}${quote}${REDACTED}${quote}`);
  const paths: Array<[string, string]> = [
    ...(options.workdir ? [[options.workdir, '<workdir>'] as [string, string]] : []),
    ...(options.paths ?? []).map((p): [string, string] => [p, '<path>']),
  ];
  // Longest first, so a path inside another is not half replaced.
  for (const [p, label] of paths.filter(([p]) => p.length > 1).sort((a, b) => b[0].length - a[0].length)) out = out.split(stripSlash(p)).join(label);
  if (options.home && options.home.length > 1) out = out.split(stripSlash(options.home)).join('~');
  return out;
}

function stripSlash(p: string): string {
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}
