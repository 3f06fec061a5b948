/** The JSONL session store: file format, atomic saves (also under SIGKILL), header-only listing, ids. */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Entry } from '@fabric-harness/sdk';
import { JsonlSessionStore, type InlineSessionHeader, type SessionFs } from '../../src/inline/session-files';

const ROOT = path.resolve(__dirname, '../..');

function header(id: string, extra: Partial<InlineSessionHeader> = {}): InlineSessionHeader {
  return {
    version: 1,
    id,
    agent: 'helper',
    status: 'todo',
    labels: [],
    flagged: false,
    archived: false,
    createdAt: 1_700_000_000_000,
    lastUsedAt: 1_700_000_000_000,
    messageCount: 0,
    settings: {},
    ...extra,
  };
}

/** A conversation of `turns` user/assistant pairs with `textBytes` of text in each assistant entry. */
function conversation(turns: number, textBytes = 100): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ type: 'user', text: `question ${i}` });
    out.push({ type: 'assistant', content: [{ type: 'text', text: `answer ${i} ${'x'.repeat(textBytes)}` }], stopReason: 'end_turn' });
  }
  return out;
}

describe('JsonlSessionStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-sessions-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('writes line 1 the header, then one line per entry; directory 0700, file 0600; load reads it back', async () => {
    const store = new JsonlSessionStore({ dir: path.join(dir, 'nested', 'sessions') });
    const entries: Entry[] = [
      { type: 'user', text: 'use the tool' },
      { type: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'echo', input: { text: 'hi' } }], stopReason: 'tool_use' },
      { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', content: 'hi' }] },
      { type: 'assistant', content: [{ type: 'text', text: 'done\nwith a newline' }], usage: { inputTokens: 3, outputTokens: 4 } },
    ];
    await store.create(header('260101-calm-otter', { title: 'Use the tool' }));
    const saved = await store.save(header('260101-calm-otter', { title: 'Use the tool' }), entries);
    expect(saved).toMatchObject({ messageCount: 0, entryCount: 4 }); // messageCount is the session's to keep

    const file = path.join(store.dir, '260101-calm-otter.jsonl');
    const lines = (await fs.readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(6); // header, 4 entries, '' after the final newline
    expect(JSON.parse(lines[0]!)).toMatchObject({ version: 1, id: '260101-calm-otter', title: 'Use the tool', entryCount: 4 });
    expect(lines.slice(1, 5).map((l) => JSON.parse(l))).toEqual(entries);
    expect(lines[5]).toBe('');
    expect((await fs.stat(store.dir)).mode & 0o777).toBe(0o700);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    // No temp file is left behind.
    expect(await fs.readdir(store.dir)).toEqual(['260101-calm-otter.jsonl']);

    expect(await store.load('260101-calm-otter')).toEqual({ header: saved, entries });
    expect(await store.readHeader('260101-calm-otter')).toEqual(saved);
  });

  it('create refuses a taken id; load/readHeader/delete of an unknown id are SESSION_NOT_FOUND', async () => {
    const store = new JsonlSessionStore({ dir });
    await store.create(header('one'));
    await expect(store.create(header('one'))).rejects.toMatchObject({ code: 'SESSION_EXISTS', id: 'one' });
    for (const call of [() => store.load('two'), () => store.readHeader('two'), () => store.delete('two'), () => store.archive('two', true)]) {
      await expect(call()).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND', id: 'two' });
    }
    await store.delete('one');
    await expect(store.load('one')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  });

  it('rejects ids that are not slugs (path traversal, upper case, too long) before touching the disk', async () => {
    const store = new JsonlSessionStore({ dir });
    await fs.writeFile(path.join(os.tmpdir(), 'fh-escape.jsonl'), 'not ours\n');
    for (const id of ['../fh-escape', '..', 'a/b', 'A', '-lead', '', 'x'.repeat(101), 'a.b', 'é']) {
      await expect(store.load(id)).rejects.toMatchObject({ code: 'INVALID_SESSION_ID', field: 'id' });
      await expect(store.save(header(id), [])).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' });
    }
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('a corrupt entry line is SESSION_FILE_CORRUPT naming the file and the line', async () => {
    const store = new JsonlSessionStore({ dir });
    await store.save(header('bad'), conversation(3));
    const file = store.fileOf('bad');
    const lines = (await fs.readFile(file, 'utf8')).split('\n');
    lines[3] = '{"type":"assistant","content":"not an array"}';
    await fs.writeFile(file, lines.join('\n'));
    await expect(store.load('bad')).rejects.toMatchObject({ code: 'SESSION_FILE_CORRUPT', file, line: 4 });
    lines[3] = '{not json';
    await fs.writeFile(file, lines.join('\n'));
    await expect(store.load('bad')).rejects.toThrow(`Session file ${file}, line 4: the entry is not JSON`);
    // Cut at a line boundary: the header's count catches it.
    await fs.writeFile(file, lines.slice(0, 3).join('\n') + '\n');
    await expect(store.load('bad')).rejects.toMatchObject({ code: 'SESSION_FILE_CORRUPT', reason: expect.stringContaining('the header counts 6 entries') });
    // The listing reports it through onCorrupt (or throws without it).
    await fs.writeFile(file, '{"version":1}\n');
    await expect(store.list()).rejects.toMatchObject({ code: 'SESSION_FILE_CORRUPT', line: 1 });
    const corrupt: string[] = [];
    expect(await store.list({ onCorrupt: (e) => corrupt.push(e.file) })).toEqual([]);
    expect(corrupt).toEqual([file]);
  });

  it('a save that fails between the temp write and the rename leaves the previous version, and no temp file', async () => {
    let failRename = false;
    const failing: SessionFs = {
      ...fs,
      rename: async (from, to) => {
        if (failRename) throw Object.assign(new Error('simulated crash before rename'), { code: 'EIO' });
        return fs.rename(from, to);
      },
    };
    const store = new JsonlSessionStore({ dir, fs: failing });
    const before = conversation(5);
    await store.save(header('kept'), before);
    failRename = true;
    await expect(store.save(header('kept', { title: 'new' }), conversation(50))).rejects.toThrow('simulated crash before rename');
    const { header: h, entries } = await store.load('kept');
    expect(entries).toEqual(before);
    expect(h.title).toBeUndefined();
    expect(await fs.readdir(dir)).toEqual(['kept.jsonl']);
  });

  it('SIGKILL in the middle of saves never leaves a session that does not load (the previous or the new version)', async () => {
    // A child process saves two large versions in turn, forever; it is killed at a random moment.
    const child = path.join(dir, 'saver.ts');
    await fs.writeFile(
      child,
      `const { JsonlSessionStore } = require(${JSON.stringify(path.join(ROOT, 'src/inline/session-files.ts'))});
       const store = new JsonlSessionStore({ dir: process.argv[2] });
       const entries = (n) => Array.from({ length: n }, (_, i) => i % 2 ? { type: 'assistant', content: [{ type: 'text', text: 'y'.repeat(20000) }] } : { type: 'user', text: 'q' + i });
       const h = (n) => ({ version: 1, id: 'big', agent: 'a', status: 'todo', labels: [], flagged: false, archived: false, createdAt: 1, lastUsedAt: n, messageCount: 0, settings: {} });
       (async () => { for (let i = 0; ; i++) { const n = i % 2 ? 400 : 300; await store.save(h(n), entries(n)); if (i === 0) process.stdout.write('saved\\n'); } })();`,
    );
    const store = new JsonlSessionStore({ dir: path.join(dir, 'sessions') });
    const kills = 6;
    for (let k = 0; k < kills; k++) {
      const proc = spawn(process.execPath, ['-r', path.join(ROOT, 'test/support/swc-register.js'), child, store.dir], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise((r) => proc.on('exit', r));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the saver did not start in 30 s')), 30_000);
        proc.stdout!.on('data', (d) => String(d).includes('saved') && (clearTimeout(timer), resolve()));
      });
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 300)); // several saves of ~6-8 MB
      proc.kill('SIGKILL');
      await exited;
      const { header: h, entries } = await store.load('big');
      expect([300, 400]).toContain(entries.length);
      expect(h.lastUsedAt).toBe(entries.length);
    }
    // The killed saves' temp files are not sessions.
    expect((await store.list()).map((h) => h.id)).toEqual(['big']);
  }, 120_000);

  it('list reads only the first line of each file: headers, archived left out unless asked, most recent first', async () => {
    let bytesRead = 0;
    const counting: SessionFs = {
      ...fs,
      open: async (...args: Parameters<typeof fs.open>) => {
        const handle = await fs.open(...args);
        const read = handle.read.bind(handle) as (...a: unknown[]) => Promise<{ bytesRead: number }>;
        const readFile = handle.readFile.bind(handle) as (...a: unknown[]) => Promise<string | Buffer>;
        return Object.assign(handle, {
          read: async (...a: unknown[]) => {
            const r = await read(...a);
            bytesRead += r.bytesRead;
            return r;
          },
          readFile: async (...a: unknown[]) => {
            const r = await readFile(...a);
            bytesRead += Buffer.byteLength(r);
            return r;
          },
        });
      },
    };
    const store = new JsonlSessionStore({ dir, fs: counting });
    const big = conversation(100, 10_000); // ~1 MB each
    for (let i = 0; i < 10; i++) {
      await store.save(header(`s${i}`, { lastUsedAt: 1000 + i, lastMessageAt: i === 3 ? 9999 : undefined, archived: i === 5 }), big);
    }
    const onDisk = (await Promise.all((await fs.readdir(dir)).map(async (f) => (await fs.stat(path.join(dir, f))).size))).reduce((a, b) => a + b, 0);
    expect(onDisk).toBeGreaterThan(10_000_000);

    bytesRead = 0;
    const listed = await store.list();
    expect(listed.map((h) => h.id)).toEqual(['s3', 's9', 's8', 's7', 's6', 's4', 's2', 's1', 's0']);
    expect(listed[0]).toMatchObject({ entryCount: 200, lastMessageAt: 9999 });
    // One 4 KB chunk per file at most: the headers, never the conversations.
    expect(bytesRead).toBeLessThanOrEqual(10 * 4096);
    expect((await store.list({ includeArchived: true })).map((h) => h.id)).toContain('s5');

    bytesRead = 0;
    await store.load('s0');
    expect(bytesRead).toBeGreaterThan(1_000_000);
  });

  it('archive rewrites the header and keeps the entries byte for byte', async () => {
    const store = new JsonlSessionStore({ dir });
    const entries = conversation(30, 5000);
    await store.save(header('arch', { title: 'ünïcode title ✓' }), entries);
    const file = store.fileOf('arch');
    const tail = (await fs.readFile(file, 'utf8')).split('\n').slice(1).join('\n');
    const updated = await store.archive('arch', true);
    expect(updated).toMatchObject({ archived: true, entryCount: 60, title: 'ünïcode title ✓' });
    expect((await fs.readFile(file, 'utf8')).split('\n').slice(1).join('\n')).toBe(tail);
    expect(await store.list()).toEqual([]);
    expect((await store.load('arch')).entries).toEqual(entries);
  });

  it('a header that does not fit the schema is refused naming the field', async () => {
    const store = new JsonlSessionStore({ dir });
    await expect(store.save({ ...header('h'), status: '' }, [])).rejects.toMatchObject({ code: 'INVALID_SESSION_HEADER', field: 'status' });
    await expect(store.save({ ...header('h'), labels: [{ name: 'p', value: {} as never }] }, [])).rejects.toMatchObject({ code: 'INVALID_SESSION_HEADER', field: 'labels.0.value' });
  });
});

describe('a session file written before 0.5.0 (messageCount held the entry count)', () => {
  it('loads, checking its entries against that count, and a save writes both counts', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-old-header-'));
    try {
      const old = { version: 1, id: '250101-old-file', agent: 'a', status: 'todo', labels: [], flagged: false, archived: false, createdAt: 1, lastUsedAt: 1, messageCount: 2, settings: {} };
      const entries = [{ type: 'user', text: 'hi' }, { type: 'assistant', content: [{ type: 'text', text: 'hello' }] }];
      await fs.writeFile(path.join(dir, '250101-old-file.jsonl'), [old, ...entries].map((l) => JSON.stringify(l)).join('\n') + '\n');
      const store = new JsonlSessionStore({ dir });
      const loaded = await store.load('250101-old-file');
      expect(loaded.entries).toHaveLength(2);
      expect((await store.save({ ...loaded.header, messageCount: 1 }, loaded.entries))).toMatchObject({ messageCount: 1, entryCount: 2 });
      // A truncated old file is still caught by the count it holds.
      await fs.writeFile(path.join(dir, '250101-old-file.jsonl'), [old, entries[0]].map((l) => JSON.stringify(l)).join('\n') + '\n');
      await expect(store.load('250101-old-file')).rejects.toMatchObject({ code: 'SESSION_FILE_CORRUPT' });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
