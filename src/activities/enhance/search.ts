import { spawn } from 'node:child_process';
import { BUILD_DIRS } from './repo-intro';

/**
 * One ripgrep call for the enhancer: every symbol OR'd together, whole words, any case, build
 * directories left out, a hard timeout (1.5 s by default), at most 10 relative paths. What can go
 * wrong — ripgrep missing, the timeout, an error — is an outcome, never a throw.
 */
export const SEARCH_TIMEOUT_MS = 1_500;
export const MAX_FILES = 10;

export type SearchOutcome =
  | { status: 'ok'; files: string[] }
  | { status: 'missing'; files: []; message: string }
  | { status: 'timeout'; files: string[]; message: string }
  | { status: 'failed'; files: []; message: string };

export function searchSymbols(symbols: string[], cwd: string, opts: { rgPath?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<SearchOutcome> {
  if (symbols.length === 0) return Promise.resolve({ status: 'ok', files: [] });
  const args = ['--files-with-matches', '--ignore-case', '--word-regexp', '--fixed-strings', '--no-messages', '--sort', 'path', '--max-filesize', '1M'];
  for (const dir of BUILD_DIRS) args.push('--glob', `!${dir}/`);
  for (const s of symbols) args.push('-e', s);
  args.push('--', '.');
  const timeoutMs = opts.timeoutMs ?? SEARCH_TIMEOUT_MS;
  return new Promise((resolve) => {
    let out = '';
    let settled = false;
    const files = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((f) => f.replace(/^\.\//, ''))
        .slice(0, MAX_FILES);
    const finish = (o: SearchOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const child = spawn(opts.rgPath ?? 'rg', args, { cwd, stdio: ['ignore', 'pipe', 'ignore'], env: opts.env ?? process.env });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish({ status: 'timeout', files: files(), message: `ripgrep did not finish within ${timeoutMs} ms` });
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // Enough: stop reading (sorted output, so the first ten are the same every time).
      if (out.split('\n').length > MAX_FILES + 1) {
        child.kill('SIGKILL');
        finish({ status: 'ok', files: files() });
      }
    });
    child.on('error', (err: NodeJS.ErrnoException) =>
      finish(err.code === 'ENOENT' ? { status: 'missing', files: [], message: 'ripgrep (rg) is not installed; install it (Debian: apt-get install ripgrep) for file retrieval' } : { status: 'failed', files: [], message: err.message }),
    );
    // rg exits 1 when nothing matched: not a failure.
    child.on('close', (code) => finish(code === 0 || code === 1 || code === null ? { status: 'ok', files: files() } : { status: 'failed', files: [], message: `ripgrep exited with ${code}` }));
  });
}
