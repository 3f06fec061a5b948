/**
 * The file tools check a path, then open it. The tool calls of one round run concurrently, so a confined
 * bash can swap a directory (or the file) for a symlink to outside in between. The seam runs exactly
 * there, and does that swap: the open must fail with SANDBOX_ESCAPE and nothing outside be read or written.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { editFile, readFile, writeFile } from '../../src/activities/tools/local-tools';
import { fileToolRaceSeam } from '../../src/activities/tools/sandbox/sandbox-open';

describe('file tools: a symlink swapped in between the check and the open', () => {
  let base: string;
  let root: string;
  let outside: string;
  let swaps: number;
  const ctx = () => ({ cwd: root, signal: new AbortController().signal, heartbeat: () => undefined });

  /** After the check, replace `victim` (inside the sandbox) by a symlink to `target` (outside). */
  const swapAfterCheck = (victim: string, target: string) => {
    fileToolRaceSeam.betweenCheckAndOpen = async () => {
      await fs.rm(path.join(root, victim), { recursive: true, force: true });
      await fs.symlink(target, path.join(root, victim));
      swaps++;
    };
  };

  beforeEach(async () => {
    swaps = 0;
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-race-')));
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    await fs.mkdir(path.join(root, 'sub'), { recursive: true });
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, 'secret.txt'), 'TOP SECRET');
    await fs.writeFile(path.join(root, 'sub', 'notes.txt'), 'hello notes');
  });
  afterEach(async () => {
    delete fileToolRaceSeam.betweenCheckAndOpen;
    await fs.rm(base, { recursive: true, force: true });
  });

  const outsideUntouched = async () => {
    expect(swaps).toBe(1); // the race did happen
    expect((await fs.readdir(outside)).sort()).toEqual(['secret.txt']);
    expect(await fs.readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET');
  };

  it('write_file: an intermediate directory swapped for a symlink to outside', async () => {
    swapAfterCheck('sub', outside);
    await expect(writeFile({ path: 'sub/secret.txt', content: 'overwritten' }, ctx())).rejects.toMatchObject({ code: 'SANDBOX_ESCAPE' });
    await outsideUntouched();
  });

  it('write_file: a new file under a swapped directory, and new directories under it', async () => {
    swapAfterCheck('sub', outside);
    await expect(writeFile({ path: 'sub/planted.txt', content: 'planted' }, ctx())).rejects.toMatchObject({ code: 'SANDBOX_ESCAPE' });
    await outsideUntouched();
    await fs.rm(path.join(root, 'sub'));
    await fs.mkdir(path.join(root, 'sub'));
    swaps = 0;
    await expect(writeFile({ path: 'sub/deep/er/planted.txt', content: 'planted' }, ctx())).rejects.toMatchObject({ code: 'SANDBOX_ESCAPE' });
    await outsideUntouched();
  });

  it('write_file and edit_file: the file itself swapped for a symlink to a file outside', async () => {
    swapAfterCheck('sub/notes.txt', path.join(outside, 'secret.txt'));
    await expect(writeFile({ path: 'sub/notes.txt', content: 'overwritten' }, ctx())).rejects.toMatchObject({ code: 'SANDBOX_ESCAPE' });
    await outsideUntouched();
    await fs.rm(path.join(root, 'sub', 'notes.txt'));
    await fs.writeFile(path.join(root, 'sub', 'notes.txt'), 'hello notes');
    swaps = 0;
    await expect(editFile({ path: 'sub/notes.txt', old_string: 'TOP', new_string: 'NO' }, ctx())).rejects.toMatchObject({ code: 'SANDBOX_ESCAPE' });
    await outsideUntouched();
  });

  it('read_file: a swapped directory reveals nothing from outside', async () => {
    await fs.writeFile(path.join(root, 'sub', 'secret.txt'), 'inside copy');
    swapAfterCheck('sub', outside);
    await expect(readFile({ path: 'sub/secret.txt' }, ctx())).rejects.toMatchObject({ code: 'SANDBOX_ESCAPE' });
    expect(swaps).toBe(1);
  });

  it('without a swap the same calls work, new directories included', async () => {
    expect(await writeFile({ path: 'sub/deep/er/made.txt', content: 'made' }, ctx())).toBe('wrote 4 bytes to sub/deep/er/made.txt');
    expect(await fs.readFile(path.join(root, 'sub/deep/er/made.txt'), 'utf8')).toBe('made');
    expect(await editFile({ path: 'sub/notes.txt', old_string: 'hello', new_string: 'bye, long' }, ctx())).toBe('edited sub/notes.txt');
    expect(await readFile({ path: 'sub/notes.txt' }, ctx())).toBe('bye, long notes');
    expect(await editFile({ path: 'sub/notes.txt', old_string: 'bye, long', new_string: 'ok' }, ctx())).toBe('edited sub/notes.txt');
    expect(await readFile({ path: 'sub/notes.txt' }, ctx())).toBe('ok notes');
  });
});
