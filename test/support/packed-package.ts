/**
 * The package as users get it, for test/integration/tarball.test.ts and init.test.ts: `npm pack` of the
 * built package (dist/), and `npm install` from the registry with `--prefer-offline`, so the local cache
 * serves what it has.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = path.resolve(__dirname, '../..');

/** Packs this repository into `dir`; resolves to the tarball's path. */
export async function packTarball(dir: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: ROOT });
  return path.join(dir, stdout.trim().split('\n').at(-1)!);
}

/** `npm install` in `dir` (these specs, or the package.json's dependencies when none), quietly. */
export async function npmInstall(dir: string, specs: string[] = []): Promise<void> {
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...specs], { cwd: dir, timeout: 300_000 });
}

/** The @types/node this repository compiles with, as an npm spec. */
export const typesNodeSpec = (): string => `@types/node@${(require('@types/node/package.json') as { version: string }).version}`;
