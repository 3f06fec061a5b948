/**
 * The built `fh` binary (dist/cli/main.js) in a subprocess, as users run it: built first when dist/ is
 * missing or older than src/.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
export const FH = path.join(ROOT, 'dist/cli/main.js');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Builds dist/ when it is missing or older than src/. */
export function ensureBuilt(): void {
  const newest = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
      const p = path.join(dir, e.name);
      return Math.max(m, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
    }, 0);
  const built = fs.existsSync(FH) ? fs.statSync(FH).mtimeMs : 0;
  if (built >= newest(path.join(ROOT, 'src'))) return;
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
}

/** Runs `fh …` to completion with exactly `env` (stdin is not a terminal: empty, or `input` piped in and closed). */
export function runFh(args: string[], env: NodeJS.ProcessEnv, opts: { cwd?: string; timeoutMs?: number; input?: string } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FH, ...args], { cwd: opts.cwd ?? ROOT, env, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fh ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
