import { constants, promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { SandboxEscapeError } from './sandbox-path';

/**
 * Opens a file the file tools checked (sandbox-path.ts) without trusting that the path still means what
 * it meant at the check. The tool calls of one round run concurrently, so a confined bash can swap a
 * directory of the checked path for a symlink to outside between the check and the write. Here the
 * checked real path is walked from the sandbox root one component at a time, each directory opened
 * with O_DIRECTORY|O_NOFOLLOW relative to the descriptor of the one before (`/proc/self/fd/<dirfd>/<name>`
 * on Linux: openat semantics, the kernel resolves the name in the directory the descriptor holds), and
 * the file itself with O_NOFOLLOW. The checked path has no symlinks left (it is a real path), so a
 * symlink met on the walk can only be one swapped in since: the open fails with SANDBOX_ESCAPE and
 * nothing is read or written outside.
 *
 * Without /proc (not Linux) it falls back to opening the checked path with O_NOFOLLOW on the last
 * component only; bash is unconfined there anyway (bubblewrap is Linux-only).
 */
export type OpenMode = 'read' | 'write' | 'edit';

/**
 * A test-only seam: runs between the path check and the open. Nothing the model sends reaches it; the
 * race tests set it to swap a directory for a symlink at exactly the moment a concurrent bash could.
 */
export const fileToolRaceSeam: { betweenCheckAndOpen?: (checked: string) => Promise<void> } = {};

const PROC_FD = '/proc/self/fd';
let procFdWorks: boolean | undefined;

async function hasProcFd(): Promise<boolean> {
  return (procFdWorks ??= process.platform === 'linux' && (await fs.stat(PROC_FD).then((s) => s.isDirectory(), () => false)));
}

const FLAGS: Record<OpenMode, number> = {
  read: constants.O_RDONLY,
  write: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC,
  edit: constants.O_RDWR,
};

/** What a refused open means: a symlink or a non-directory where a directory was, i.e. swapped since the check. */
function escaped(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ELOOP' || code === 'ENOTDIR' || code === 'EMLINK';
}

/**
 * Opens `checked` (a real path inside the real sandbox root `realRoot`, as sandbox-path.ts answers it).
 * 'write' makes the missing directories on the way (each made inside the directory descriptor before it).
 */
export async function openConfined(realRoot: string, checked: string, requested: string, mode: OpenMode): Promise<FileHandle> {
  await fileToolRaceSeam.betweenCheckAndOpen?.(checked);
  const rel = path.relative(realRoot, checked);
  const parts = rel.split(path.sep).filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..') || path.isAbsolute(rel)) throw new SandboxEscapeError(requested, realRoot);
  const name = parts.pop()!;
  const fileFlags = FLAGS[mode] | constants.O_NOFOLLOW;
  if (!(await hasProcFd())) {
    if (mode === 'write') await fs.mkdir(path.dirname(checked), { recursive: true });
    return guard(() => fs.open(checked, fileFlags, 0o666), requested, realRoot);
  }
  let dir = await fs.open(realRoot, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    for (const part of parts) {
      const at = `${PROC_FD}/${dir.fd}/${part}`;
      // mkdir does not follow a symlink in the last place (EEXIST), so it never makes a directory outside.
      if (mode === 'write') await fs.mkdir(at).catch((err: NodeJS.ErrnoException) => (err.code === 'EEXIST' ? undefined : Promise.reject(err)));
      const next = await guard(() => fs.open(at, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW), requested, realRoot);
      await dir.close();
      dir = next;
    }
    return await guard(() => fs.open(`${PROC_FD}/${dir.fd}/${name}`, fileFlags, 0o666), requested, realRoot);
  } finally {
    await dir.close();
  }
}

async function guard<T>(open: () => Promise<T>, requested: string, realRoot: string): Promise<T> {
  try {
    return await open();
  } catch (err) {
    if (escaped(err)) throw new SandboxEscapeError(requested, realRoot);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`no such file: ${requested}`);
    throw err;
  }
}
