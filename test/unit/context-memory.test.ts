/**
 * The memory flush (compaction.memory), inline against the scripted fake: a compaction sends the
 * dropped slice to an extraction request, the memory is re-injected into the summary and reaches the
 * next model request, a new session of the same agent sees it in its system prompt; an over-budget
 * file is compacted; a failed flush is an error event and the compaction goes on; bad settings name the field.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { init, isEvent, InvalidCompactionSettingsError, type AgentEvent } from '@fabric-harness/sdk';
import { FakeAnthropicServer, fail, say } from '@fabric-harness/sdk/testing';
import { MEMORY_COMPACT_MARKER, MEMORY_EXTRACT_MARKER, trimOldestBullets, updateMemory } from '../../src/core/context/memory-extract';
import { MemoryFiles, memoryBlobKey, memoryPointerKey } from '../../src/activities/stores/memory-files';
import { MemoryTranscriptStore } from '../../src/activities/stores/transcript-store';
import { StoreIntegrityError } from '../../src/activities/stores/store-errors';
import { estimateTextTokens } from '../../src/core/tokens';
import { inlineInit } from '../../src/inline/invoke';
import { savedAnthropicEnv } from '../support/anthropic-env';

const SUMMARY_MARKER = '[fabric-harness:summarize]';
const textOf = (r: { body: any }) => JSON.stringify(r.body.messages);
const isSummary = (r: { body: any }) => String(r.body?.system ?? '').startsWith(SUMMARY_MARKER);
const isExtraction = (r: { body: any }) => textOf(r).includes(MEMORY_EXTRACT_MARKER);
const isMemoryCompaction = (r: { body: any }) => textOf(r).includes(MEMORY_COMPACT_MARKER);

let fake: FakeAnthropicServer;
let dir: string;
let memoryReply: () => ReturnType<typeof say>;
let compactReply: () => ReturnType<typeof say>;
const env = savedAnthropicEnv();

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-memory-'));
  memoryReply = () => say('- Decided: use PostgreSQL for storage\n- Prefers: tabs over spaces');
  compactReply = () => say('- short');
  fake = await FakeAnthropicServer.start({
    route: (req) => (isSummary(req) ? say('## Goal\nModel summary.') : isExtraction(req) ? memoryReply() : isMemoryCompaction(req) ? compactReply() : undefined),
  });
  env.pointAt(fake.url);
});
afterEach(async () => {
  const left = fake.remaining();
  await fake.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  expect(left).toBe(0);
});
afterAll(() => {
  env.restore();
});

/** init() as an agent named `agent` would get it inline, with memory files in the test's directory. */
function agentInit(agent: string, events: AgentEvent[]) {
  return inlineInit('default', { memoryDir: dir, onEvent: (e) => events.push(e) }, undefined, agent);
}

async function warmSession(agent: string, compaction: Record<string, unknown>, events: AgentEvent[]) {
  const s = await (await agentInit(agent, events)({ contextWindowTokens: 100_000, compaction })).session();
  fake.enqueue(say('one'), say('two'), say('three'));
  for (const p of ['first prompt', 'second prompt', 'third prompt']) await s.prompt(p);
  return s;
}

describe('memory flush', () => {
  it('flushes the dropped slice, re-injects the memory into the summary, and a new session of the agent sees it', async () => {
    const events: AgentEvent[] = [];
    const s = await warmSession('coder', { memory: { enabled: true } }, events);
    await s.compact({ keepRecentEntries: 2 });

    const extraction = fake.messageRequests().filter(isExtraction);
    expect(extraction).toHaveLength(1);
    // The dropped slice (the first two turns) and nothing kept.
    expect(textOf(extraction[0]!)).toContain('first prompt');
    expect(textOf(extraction[0]!)).toContain('second prompt');
    expect(textOf(extraction[0]!)).not.toContain('third prompt');
    const summaryEntry = s.messages()[0] as { type: string; injected?: string };
    expect(summaryEntry.type).toBe('summary');
    expect(summaryEntry.injected).toBe('## Memory\n- Decided: use PostgreSQL for storage\n- Prefers: tabs over spaces');

    fake.enqueue(say('four'));
    await s.prompt('fourth prompt');
    const next = fake.messageRequests().filter((r) => !isSummary(r) && !isExtraction(r)).at(-1)!;
    expect(textOf(next)).toContain('use PostgreSQL for storage');

    // A new session of the same agent: the memory is in its system prompt, once.
    const other: AgentEvent[] = [];
    const s2 = await (await agentInit('coder', other)({ contextWindowTokens: 100_000, system: 'You code.', compaction: { memory: { enabled: true } } })).session();
    fake.enqueue(say('hi'), say('again'));
    await s2.prompt('hello');
    await s2.prompt('hello again');
    const calls = fake.messageRequests().slice(-2);
    for (const c of calls) {
      expect(JSON.stringify(c.body.system)).toContain('You code.\\n\\n## Memory from earlier sessions\\n- Decided: use PostgreSQL for storage');
    }
    expect(JSON.stringify(calls[0]!.body.system)).toBe(JSON.stringify(calls[1]!.body.system));

    // Another agent (another key) sees nothing of it.
    const s3 = await (await agentInit('reviewer', [])({ contextWindowTokens: 100_000, compaction: { memory: { enabled: true } } })).session();
    fake.enqueue(say('hi'));
    await s3.prompt('hello');
    expect(JSON.stringify(fake.messageRequests().at(-1)!.body.system ?? '')).not.toContain('PostgreSQL');
  });

  it('merges with the stored memory on the next flush (the existing file is in the extraction request)', async () => {
    const s = await warmSession('coder', { memory: { enabled: true, key: 'user-42' } }, []);
    await s.compact({ keepRecentEntries: 2 });
    fake.enqueue(say('four'), say('five'));
    await s.prompt('fourth prompt');
    await s.prompt('fifth prompt');
    memoryReply = () => say('- Decided: use PostgreSQL for storage\n- Learned: fifth');
    await s.compact({ keepRecentEntries: 2 });
    const extraction = fake.messageRequests().filter(isExtraction);
    expect(extraction).toHaveLength(2);
    expect(textOf(extraction[1]!)).toContain('<existing-memory>\\n- Decided: use PostgreSQL for storage\\n- Prefers: tabs over spaces');
    expect(fs.existsSync(path.join(dir, memoryPointerKey('user-42')))).toBe(true);
    expect(fs.existsSync(path.join(dir, memoryPointerKey('coder')))).toBe(false);
  });

  it('off by default: no extraction request', async () => {
    const s = await warmSession('coder', {}, []);
    await s.compact({ keepRecentEntries: 2 });
    expect(fake.messageRequests().filter(isExtraction)).toHaveLength(0);
    expect((s.messages()[0] as { injected?: string }).injected).toBeUndefined();
  });

  it('a memory over its budget is compacted by a second call, and trimmed if that is still over', async () => {
    const long = Array.from({ length: 80 }, (_, i) => `- fact number ${i} about the project and its many details`).join('\n');
    memoryReply = () => say(long);
    compactReply = () => say(long); // the compaction call does not help either
    const s = await warmSession('coder', { memory: { enabled: true, maxTokens: 200 } }, []);
    await s.compact({ keepRecentEntries: 2 });
    expect(fake.messageRequests().filter(isMemoryCompaction)).toHaveLength(1);
    const injected = (s.messages()[0] as { injected?: string }).injected!;
    const memory = injected.replace('## Memory\n', '');
    expect(estimateTextTokens(memory)).toBeLessThanOrEqual(200);
    // The newest bullets are kept.
    expect(memory).toContain('fact number 79');
    expect(memory).not.toContain('fact number 0 ');
  });

  it('a failed flush is a MEMORY_FLUSH_FAILED error event and the compaction goes on', async () => {
    memoryReply = () => fail(400, { message: 'bad request' }) as never;
    const events: AgentEvent[] = [];
    const s = await warmSession('coder', { memory: { enabled: true } }, events);
    const result = await s.compact({ keepRecentEntries: 2 });
    expect(result.compactedEntries).toBe(4);
    expect(s.messages()[0]!.type).toBe('summary');
    const errors = events.filter((e) => isEvent(e, 'error')).map((e) => e.data as { code: string; recoverable: boolean });
    expect(errors).toEqual([expect.objectContaining({ code: 'MEMORY_FLUSH_FAILED', recoverable: true })]);
    expect(events.some((e) => e.type === 'compaction')).toBe(true);
  });
});

describe('memory settings', () => {
  it.each([
    [{ enabled: true, maxTokens: 5 }, 'memory.maxTokens'],
    [{ enabled: 'yes' }, 'memory.enabled'],
    [{ key: '../etc' }, 'memory.key'],
    [{ enabled: true, budget: 3 }, 'memory.budget'],
  ])('%j is refused naming %s', async (memory, field) => {
    const err = await init({ compaction: { memory } as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidCompactionSettingsError);
    expect((err as InvalidCompactionSettingsError).field).toBe(field);
  });
});

describe('memory files and budget', () => {
  it('a memory text altered in the store is refused with StoreIntegrityError', async () => {
    const store = new MemoryTranscriptStore();
    const files = new MemoryFiles(store);
    const saved = await files.save('coder', '- a');
    expect(await files.load('coder')).toEqual(saved);
    await store.put(memoryBlobKey(saved.hash), new TextEncoder().encode('- injected instructions'));
    await expect(files.load('coder')).rejects.toBeInstanceOf(StoreIntegrityError);
  });

  it('trimOldestBullets keeps the newest bullets within the budget', () => {
    const text = ['- old one', '- middle', '  continued', '- newest'].join('\n');
    const budget = estimateTextTokens('- middle\n  continued') + estimateTextTokens('- newest') + 2;
    expect(trimOldestBullets(text, budget)).toBe('- middle\n  continued\n- newest');
    expect(estimateTextTokens(trimOldestBullets(text, 3))).toBeLessThanOrEqual(3);
  });

  it('a reply in budget needs one call; a second call that fits ends there', async () => {
    const asked: string[] = [];
    const first = await updateMemory(async (r) => (asked.push(r.system), { text: '- x' }), { existing: undefined, dropped: [], maxTokens: 100 });
    expect(first).toMatchObject({ text: '- x', compacted: 'no' });
    expect(asked).toHaveLength(1);
    const long = '- ' + 'word '.repeat(400);
    const second = await updateMemory(async (r) => ({ text: r.userText.includes(MEMORY_COMPACT_MARKER) ? '- short' : long }), { existing: '- y', dropped: [], maxTokens: 100 });
    expect(second).toMatchObject({ text: '- short', compacted: 'model' });
  });
});
