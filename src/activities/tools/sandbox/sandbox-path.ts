import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FabricError } from '../../../core/errors';

/**
 * Confines the file tools to the sandbox directory. Paths are checked after symlinks are resolved
 * (the target's real path, and for a file that does not exist yet its nearest existing ancestor's), so
 * `../x`, absolute paths and symlinks (to files or directories) that lead outside are all refused.
 * The tools then open the resolved real path through sandbox-open.ts, which walks it again without
 * following links (a concurrent bash may have swapped a directory for a symlink since the check).
 *
 * This confines the file tools only: bash can still reach anything the worker's user can, unless the
 * worker runs it inside a wrapper (see tool-env.ts).
 */
export class SandboxEscapeError extends FabricError {
  constructor(
    readonly requested: string,
    readonly root: string,
  ) {
    super('SANDBOX_ESCAPE', `path '${requested}' is outside the sandbox directory ${root} (after resolving symlinks); use a path inside it`);
  }
}

/** The sandbox directory does not exist: it is never created for the agent (a typo would make it anywhere). */
export class SandboxMissingError extends FabricError {
  constructor(readonly root: string) {
    super('SANDBOX_MISSING', `the sandbox directory ${root} does not exist; create it first (it is not created for you)`);
  }
}

/** Throws SandboxMissingError unless `root` is an existing directory. */
export async function requireSandboxDir(root: string): Promise<void> {
  const st = await fs.stat(root).catch(() => undefined);
  if (!st?.isDirectory()) throw new SandboxMissingError(root);
}

function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The sandbox directory's real path (SANDBOX_MISSING unless it is a directory). */
export async function realRoot(root: string): Promise<string> {
  await requireSandboxDir(root);
  return fs.realpath(root);
}

/** The real path of an existing file or directory inside the sandbox; refuses one that leads outside. */
export async function confinedExistingPath(root: string, requested: string): Promise<string> {
  const real = await realRoot(root);
  const target = path.resolve(real, requested);
  let resolved: string;
  try {
    resolved = await fs.realpath(target);
  } catch (err) {
    // Missing: say so only when the name itself is inside; otherwise do not reveal what exists outside.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (await confinedNewPath(root, requested).then(() => true, () => false))) {
      throw new Error(`no such file: ${requested}`);
    }
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SandboxEscapeError(requested, real);
    throw err;
  }
  if (!isInside(real, resolved)) throw new SandboxEscapeError(requested, real);
  return resolved;
}

/**
 * Where to write `requested`: the real path of the file when it exists (a symlink inside the sandbox is
 * followed, one leading outside refused, a dangling one refused), else the real path of its nearest
 * existing ancestor joined with the missing part. Nothing is made here: sandbox-open.ts makes the missing
 * directories, each inside the descriptor of the one before, so a swapped symlink cannot redirect them.
 */
export async function confinedNewPath(root: string, requested: string): Promise<string> {
  const real = await realRoot(root);
  const target = path.resolve(real, requested);
  if (!isInside(real, target)) throw new SandboxEscapeError(requested, real);
  const stat = await fs.lstat(target).catch(() => undefined);
  if (stat) {
    const resolved = await fs.realpath(target).catch(() => undefined); // undefined: a dangling symlink
    if (!resolved || !isInside(real, resolved)) throw new SandboxEscapeError(requested, real);
    return resolved;
  }
  // Walk up to the nearest existing ancestor; it (after symlinks) must be inside.
  const missing: string[] = [path.basename(target)];
  let dir = path.dirname(target);
  for (;;) {
    const st = await fs.lstat(dir).catch(() => undefined);
    if (st) break;
    missing.unshift(path.basename(dir));
    dir = path.dirname(dir);
  }
  const realDir = await fs.realpath(dir).catch(() => undefined);
  if (!realDir || !isInside(real, realDir)) throw new SandboxEscapeError(requested, real);
  return path.join(realDir, ...missing);
}
