/**
 * The code samples of the product's compaction doc (docs/compaction.md) are our API contract: each is
 * kept verbatim under test/seeds/ (checked here: the file's `seed:begin`…`seed:end` region equals the
 * block the doc annotates with `<!-- seed: test/seeds/<file> -->`), type-checked by `npm run typecheck`,
 * and run here against the scripted fake Anthropic server — inline, and the default-entry agent on
 * Temporal. Nothing here reads outside the repository.
 */
import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { transformSync } from '@swc/core';
import { startAgent } from '@fabric-harness/sdk/client';
import { bundleAgents, createWorker, FileTranscriptStore, FabricHarnessPlugin } from '@fabric-harness/sdk/worker';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { Client } from '@temporalio/client';
import longRunning from '../seeds/long-running';
import longRunningStrict from '../seeds/long-running-strict';
import { manualCompaction } from '../seeds/manual-compaction';
import { disabled } from '../seeds/disable';
import { init, isEvent } from '@fabric-harness/sdk';
import { testConnection } from '../support/temporal';
import { codeBlocks } from '../support/markdown-blocks';
import { savedAnthropicEnv } from '../support/anthropic-env';

const ROOT = path.resolve(__dirname, '../..');
const DOC = 'docs/compaction.md';
const SAMPLES = ['long-running.ts', 'long-running-strict.ts', 'events.mts', 'manual-compaction.ts', 'disable.ts'];

/** The region between `// seed:begin` and `// seed:end`, dedented by the indentation of the begin marker. */
function seedRegion(text: string): string {
  const m = /^([ \t]*)\/\/ seed:begin\n([\s\S]*?)^[ \t]*\/\/ seed:end/m.exec(text);
  if (!m) throw new Error('no // seed:begin … // seed:end region');
  const indent = m[1];
  return m[2]
    .split('\n')
    .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
    .join('\n');
}

describe('the compaction doc samples (docs/compaction.md)', () => {
  let fake: FakeAnthropicServer;
  const conn = { apiKey: 'test-key', baseURL: '' };

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    conn.baseURL = fake.url;
    fake.setRoute((req) => (String(req.body?.system ?? '').startsWith('[fabric-harness:summarize]') ? say('## Goal\nTest.') : undefined));
  });
  afterAll(() => fake?.stop());

  it('are kept verbatim: each test/seeds file equals its block in docs/compaction.md, and every seed block has a file', async () => {
    const blocks = codeBlocks(await fs.readFile(path.join(ROOT, DOC), 'utf8'), DOC).filter((b) => b.annotation?.kind === 'seed');
    const annotated = blocks.map((b) => b.annotation!.attrs.value).sort();
    expect(annotated).toEqual(SAMPLES.map((f) => `test/seeds/${f}`).sort());
    for (const block of blocks) {
      const file = block.annotation!.attrs.value;
      const sample = seedRegion(await fs.readFile(path.join(ROOT, file), 'utf8'));
      // Compared as text, line by line, so a failure names the first line that differs.
      expect({ file, doc: `${DOC}:${block.line}`, lines: sample.split('\n') }).toEqual({ file, doc: `${DOC}:${block.line}`, lines: block.code.split('\n') });
    }
  });

  it('the default-entry agent runs inline', async () => {
    fake.enqueue(say('hello back'));
    expect(await longRunning.invoke({ message: 'hello' }, conn)).toEqual({ reply: 'hello back' });
    const sent = fake.messageRequests().at(-1)!.body;
    expect(sent.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
  });

  it('the strict-entry agent runs inline, and rejects input that fails its schema', async () => {
    fake.enqueue(say('strict hello'));
    expect(await longRunningStrict.invoke({ message: 'hello' }, conn)).toBe('strict hello');
    await expect(longRunningStrict.invoke({ msg: 'hello' } as any, conn)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'message' });
  });

  it('the default-entry agent runs on Temporal with the same result', async () => {
    const t = await testConnection();
    const store = new FileTranscriptStore(path.join(ROOT, 'test/seeds/.out/store'));
    const taskQueue = `seeds-${process.pid}`;
    const worker = await createWorker({
      agents: path.join(ROOT, 'test/seeds/long-running.ts'),
      connection: t.nativeConnection,
      namespace: t.namespace,
      taskQueue,
      model: conn,
      store,
      workflowBundle: await bundleAgents(path.join(ROOT, 'test/seeds/long-running.ts'), { logger: quiet }),
    });
    const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
    fake.enqueue(say('hello back'));
    try {
      const result = await worker.runUntil(async () =>
        (await startAgent(client, longRunning, { message: 'hello' }, { workflowId: `seed-${Date.now()}`, taskQueue })).result(),
      );
      expect(result).toEqual({ reply: 'hello back' });
    } finally {
      await t.close();
    }
  });

  it('the event-subscription module runs as written (an ES module with top-level await)', async () => {
    expect(existsSync(path.join(ROOT, 'dist/index.js'))).toBe(true); // built by `npm test`'s pretest
    const source = await fs.readFile(path.join(ROOT, 'test/seeds/events.mts'), 'utf8');
    const { code } = transformSync(source, { filename: 'events.mts', jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'es6' } });
    const out = path.join(ROOT, 'test/seeds/.out/events.mjs');
    await fs.mkdir(path.dirname(out), { recursive: true });
    await fs.writeFile(out, code);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [out], { cwd: ROOT });
    expect({ stdout, stderr }).toEqual({ stdout: '', stderr: '' });
  });

  describe('with a harness from the imported init (model settings from the environment)', () => {
    const env = savedAnthropicEnv();
    beforeAll(() => {
      env.pointAt(fake.url);
    });
    afterAll(() => {
      env.restore();
    });

    it('manual compaction, as the doc writes it, on a live session', async () => {
      const reasons: string[] = [];
      const session = await (
        await init({ contextWindowTokens: 50_000, onEvent: (e) => void (isEvent(e, 'compaction') && reasons.push(e.data.reason)) })
      ).session();
      for (let i = 0; i < 7; i++) {
        fake.enqueue(say(`answer ${i}`));
        await session.prompt(`question ${i}`);
      }
      const printed: unknown[][] = [];
      const spy = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args));
      try {
        await manualCompaction(session);
      } finally {
        spy.mockRestore();
      }
      expect(printed).toHaveLength(1);
      expect(printed[0][0]).toContain('## Goal');
      expect(printed[0][1]).toBe(4); // 14 entries, the 10 most recent kept
      expect(reasons).toEqual(['manual']);
      expect(session.messages()[0].type).toBe('summary');
    });

    it('"To disable" turns compaction off', async () => {
      const session = await (await disabled()).session();
      expect(session.compactionState()).toMatchObject({ enabled: false, count: 0 });
    });
  });
});

const noop = () => undefined;
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
