/**
 * Artifact offloading: the settings (validated, naming the field; the default per entry), the reference
 * the model sees instead of a large output (threshold, preview, marker), read_artifact and its 0.3.0
 * alias read_tool_result, and the whole loop inline (the model reads the artifact back a page at a time).
 */
import { createHash } from 'node:crypto';
import { agent, schema, tool } from '@fabric-harness/sdk';
import { agent as strictAgent } from '@fabric-harness/sdk/strict';
import { callTools, FakeAnthropicServer, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { parseCompactionSettings } from '../../src/core/context/settings';
import { Session } from '../../src/core/conversation';
import type { ModelCallResult, RuntimePorts, ToolCallRequest } from '../../src/core/ports';
import type { AssistantEntry, ToolResultsEntry } from '../../src/core/entries';
import { builtinTools } from '../../src/core/builtin-tools';
import { fieldOf } from './compaction-helpers';
import {
  artifactPage,
  artifactReference,
  DEFAULT_OFFLOAD_BYTES,
  PREVIEW_BYTES,
  resolveOffloadBytes,
  shouldOffload,
} from '../../src/core/context/artifacts';
import { offloadToolResult, readArtifact } from '../../src/activities/stores/artifacts';
import { MemoryTranscriptStore } from '../../src/activities/stores/transcript-store';
import { ToolResultStore } from '../../src/activities/stores/tool-results';
import { createInlinePorts } from '../../src/inline/ports';
import { toPromise } from '../../src/core/pending';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i} of the build log`).join('\n');

describe('artifact settings', () => {
  it('accepts them', () => {
    expect(parseCompactionSettings({ artifacts: { offloadBytes: 50_000 } })).toEqual({ artifacts: { offloadBytes: 50_000 } });
    expect(parseCompactionSettings({ artifacts: { enabled: false } })).toEqual({ artifacts: { enabled: false } });
  });

  it.each([
    [{ artifacts: { offloadBytes: 100 } }, 'artifacts.offloadBytes'],
    [{ artifacts: { offloadBytes: 5000.5 } }, 'artifacts.offloadBytes'],
    [{ artifacts: { offloadBytes: '100KB' } }, 'artifacts.offloadBytes'],
    [{ artifacts: { enabled: 'yes' } }, 'artifacts.enabled'],
    [{ artifacts: { offloadKB: 100 } }, 'artifacts.offloadKB'],
  ])('%j is refused naming %s', (value, field) => {
    expect(fieldOf(() => parseCompactionSettings(value))).toBe(field);
  });

  it('defaults: 100 KB on the default entry, off on the strict one unless set; compaction off turns the default off', () => {
    expect(resolveOffloadBytes(undefined, true)).toBe(DEFAULT_OFFLOAD_BYTES);
    expect(resolveOffloadBytes({}, true)).toBe(100_000);
    expect(resolveOffloadBytes(undefined, false)).toBeUndefined();
    expect(resolveOffloadBytes({ artifacts: { offloadBytes: 8192 } }, false)).toBe(8192);
    expect(resolveOffloadBytes({ artifacts: { enabled: true } }, false)).toBe(100_000);
    expect(resolveOffloadBytes({ enabled: false }, true)).toBeUndefined();
    expect(resolveOffloadBytes({ enabled: false, artifacts: { offloadBytes: 8192 } }, true)).toBe(8192);
    expect(resolveOffloadBytes({ artifacts: { enabled: false, offloadBytes: 8192 } }, true)).toBeUndefined();
  });
});

describe('the threshold and the reference', () => {
  it('counts UTF-8 bytes, not characters', () => {
    expect(shouldOffload('a'.repeat(5000), 5000)).toBe(false);
    expect(shouldOffload('a'.repeat(5001), 5000)).toBe(true);
    expect(shouldOffload('é'.repeat(2501), 5000)).toBe(true); // 2,501 characters, 5,002 bytes
    expect(shouldOffload('é'.repeat(2500), 5000)).toBe(false);
    expect(shouldOffload('a'.repeat(1_000_000), undefined)).toBe(false);
  });

  it('names the ref, size, tool and first argument, the line count, whole first lines up to 1 KB, and how to read it', () => {
    const content = lines(10_000);
    const ref = sha(content);
    const text = artifactReference(content, ref, { tool: 'bash', input: { command: 'make test', timeoutMs: 5 } });
    const [head, ...rest] = text.split('\n');
    expect(head).toBe(`[artifact ${ref}: ${(Buffer.byteLength(content) / 1000).toFixed(1)} KB of output from bash("make test") — 10000 lines; first lines:`);
    expect(text.endsWith(`\nRead it with read_artifact({"ref":"${ref}","offset":0})]`)).toBe(true);
    const preview = rest.slice(0, -1).join('\n');
    expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(PREVIEW_BYTES);
    expect(Buffer.byteLength(preview)).toBeGreaterThan(PREVIEW_BYTES - 40);
    expect(content.startsWith(preview + '\n')).toBe(true); // whole lines
    expect(artifactReference('x'.repeat(5000), ref, { tool: 'big_output', input: { kb: 300 } })).toContain('output from big_output(300) — 1 line;');
  });

  it('a preview never splits a character, even a first line longer than 1 KB', () => {
    const content = '😀'.repeat(1000);
    const text = artifactReference(content, sha(content), { tool: 't', input: {} });
    const preview = text.split('\n')[1]!;
    expect(Buffer.byteLength(preview)).toBe(1024);
    expect(preview).toBe('😀'.repeat(256));
  });

  it('pages name the range and the next offset, and never split a surrogate pair', () => {
    expect(artifactPage('abcdef', 'r', 2, 3)).toBe('[characters 2-5 of 6. More: read_artifact({"ref":"r","offset":5}).]\ncde');
    expect(artifactPage('abcdef', 'r', 4, 10)).toBe('[characters 4-6 of 6.]\nef');
    expect(artifactPage('a😀b', 'r', 0, 2)).toBe('[characters 0-1 of 4. More: read_artifact({"ref":"r","offset":1}).]\na');
  });
});

describe('storing and reading back (the code the tool activity and the inline runtime share)', () => {
  it('stores an output over the threshold by its sha256 and pages it back; under it, the output is kept', async () => {
    const store = new ToolResultStore(new MemoryTranscriptStore());
    const content = lines(20_000);
    const small = await offloadToolResult(store, { content: 'ok', isError: false }, { tool: 'bash', input: {} }, 4096);
    expect(small).toEqual({ content: 'ok', isError: false });
    const big = await offloadToolResult(store, { content, isError: true }, { tool: 'bash', input: { command: 'make' } }, 100_000);
    expect(big.artifact).toEqual({ ref: sha(content), bytes: Buffer.byteLength(content) });
    expect(big.isError).toBe(true);
    expect(big.content.length).toBeLessThan(1400);
    const page = await readArtifact(store, { ref: sha(content), offset: 100, maxChars: 50 });
    expect(page).toEqual({ content: `[characters 100-150 of ${content.length}. More: read_artifact({"ref":"${sha(content)}","offset":150}).]\n${content.slice(100, 150)}`, isError: false });
    expect(await readArtifact(store, { ref: sha('never stored') })).toMatchObject({ isError: true, content: expect.stringContaining('No stored output') });
    expect(await readArtifact(store, { ref: 'nope' })).toMatchObject({ isError: true, content: expect.stringMatching(/^Invalid input: ref: must be the 64-hex ref/) });
  });
});

describe('read_tool_result, the 0.3.0 name', () => {
  it('a recorded reply that calls read_tool_result reaches the runtime (the same tool activity), though only read_artifact is offered', async () => {
    const calls: ToolCallRequest[] = [];
    const replies: AssistantEntry[] = [
      { type: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_tool_result', input: { ref: sha('x') } }] },
      { type: 'assistant', content: [{ type: 'text', text: 'done' }] },
    ];
    const offered: string[][] = [];
    const next = async (tools: Array<{ name: string }>): Promise<ModelCallResult> => {
      offered.push(tools.map((t) => t.name));
      const entry = replies.shift()!;
      return { entry, usage: { inputTokens: 1, outputTokens: 1 }, stopReason: entry.content[0]!.type === 'tool_use' ? 'tool_use' : 'end_turn', model: 'm' };
    };
    const ports: RuntimePorts = {
      runtime: 'inline',
      callModel: (req) => next(req.tools),
      decideThenCallModel: async (req) => ({ decision: { compact: false } as never, result: await next(req.tools) }),
      summarize: async () => ({ text: 's', usage: { inputTokens: 0, outputTokens: 0 } }),
      runTool: async (call) => (calls.push(call), { content: 'page', isError: false }),
      decideCompaction: async () => ({ compact: false }) as never,
      resolveModel: async (model) => ({ model: model ?? 'm' }),
      now: () => 0,
      emit: () => undefined,
    };
    const s = new Session(ports, { id: 'main', model: 'm', maxTokens: 100, tools: [builtinTools.bash, builtinTools.read_artifact], cwd: '.', maxSteps: 5, compaction: undefined, compactionDefaultEnabled: false, contextWindowTokens: 100_000 });
    expect(await s.prompt('read it')).toBe('done');
    expect(offered[0]).toEqual(['bash', 'read_artifact']);
    expect(calls.map((c) => c.name)).toEqual(['read_tool_result']);
    expect((s.messages()[2] as ToolResultsEntry).results[0]).toMatchObject({ content: 'page' });
  });

  it('the inline runtime answers both names from its store', async () => {
    const ports = createInlinePorts({ apiKey: 'k' });
    const content = lines(10_000);
    const big = tool({ name: 'big', description: 'd', input: schema.object({}), execute: () => content });
    const offloaded = await toPromise(ports.runTool({ sessionId: 's', id: 'a', name: 'big', input: {}, cwd: '.', offloadBytes: 100_000 }, big));
    expect(offloaded.artifact?.ref).toBe(sha(content));
    for (const name of ['read_artifact', 'read_tool_result']) {
      const page = await toPromise(ports.runTool({ sessionId: 's', id: 'b', name, input: { ref: sha(content), maxChars: 10 }, cwd: '.' }, builtinTools.read_artifact));
      expect(page).toEqual({ content: `[characters 0-10 of ${content.length}. More: read_artifact({"ref":"${sha(content)}","offset":10}).]\n${content.slice(0, 10)}`, isError: false });
    }
    // Without a threshold the output is kept, and stored (a capped marker's ref reads it back).
    const kept = await ports.runTool({ sessionId: 's', id: 'c', name: 'big', input: {}, cwd: '.' }, big);
    expect(kept).toEqual({ content, isError: false, contentRef: sha(content) });
  });
});

describe('inline, end to end', () => {
  const output = lines(15_000); // ≈ 400 KB
  const ref = sha(output);
  const bigTool = tool({ name: 'build_log', description: 'The build log.', input: schema.object({ target: schema.string() }), execute: () => output });
  const lastToolResult = (req: RecordedRequest): string => {
    const block = req.body.messages.at(-1).content.find((b: { type: string }) => b.type === 'tool_result');
    return typeof block?.content === 'string' ? block.content : '';
  };

  it('the default entry offloads a 400 KB output and the model reads it back with read_artifact', async () => {
    const a = agent({
      name: 'inline-artifacts',
      run: async ({ init }) => (await (await init({ tools: [bigTool], contextWindowTokens: 1_000_000 })).session()).prompt<string>('build'),
    });
    const fake = await FakeAnthropicServer.start({
      script: [callTools({ name: 'build_log', input: { target: 'all' } }), callTools({ name: 'read_artifact', input: { ref, offset: 24, maxChars: 26 } }), say('read it')],
    });
    try {
      expect(await a.invoke({}, { apiKey: 'k', baseURL: fake.url })).toBe('read it');
      const [first, second, third] = fake.messageRequests();
      expect(first!.body.tools.map((t: { name: string }) => t.name)).toEqual(['build_log', 'read_artifact']);
      const reference = lastToolResult(second!);
      expect(reference.startsWith(`[artifact ${ref}: `)).toBe(true);
      expect(reference).toContain('output from build_log("all") — 15000 lines');
      expect(reference.length).toBeLessThan(1500);
      expect(JSON.stringify(second!.body).length).toBeLessThan(10_000); // the 400 KB never reached the model
      expect(lastToolResult(third!)).toBe(`[characters 24-50 of ${output.length}. More: read_artifact({"ref":"${ref}","offset":50}).]\nline 1 of the build log\nli`);
    } finally {
      await fake.stop();
    }
  });

  it('the strict entry injects nothing: the output goes whole and no tool is added', async () => {
    const a = strictAgent({
      name: 'inline-strict-artifacts',
      input: schema.object({}),
      run: async ({ init }) => (await (await init({ tools: [bigTool], contextWindowTokens: 1_000_000 })).session()).prompt<string>('build'),
    });
    const fake = await FakeAnthropicServer.start({ script: [callTools({ name: 'build_log', input: { target: 'all' } }), say('ok')] });
    try {
      expect(await a.invoke({}, { apiKey: 'k', baseURL: fake.url })).toBe('ok');
      const [first, second] = fake.messageRequests();
      expect(first!.body.tools.map((t: { name: string }) => t.name)).toEqual(['build_log']);
      expect(lastToolResult(second!)).toBe(output);
    } finally {
      await fake.stop();
    }
  });
});
