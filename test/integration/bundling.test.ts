/**
 * Agent modules are workflow-safe by construction: their bundle holds none of the SDK's Node-only code,
 * Temporal's check for disallowed modules applies to them, and tool code reaches the worker once, from
 * the modules it loads. A tool the model calls that the worker has no code for fails the run.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Client, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { startAgent, startSession } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { bundleAgents, createWorker, FabricHarnessPlugin, MemoryTranscriptStore } from '@fabric-harness/sdk/worker';
import { orphan } from '../fixtures/agents';
import { assistant } from '../fixtures/session-agents';
import { testBundle } from '../support/bundle';
import { testConnection } from '../support/temporal';
import { startTestWorker } from '../support/test-worker';
import { collectToolCode } from '../../src/worker/tool-code';

const fixture = (f: string) => path.resolve(__dirname, '../fixtures', f);
const noop = () => undefined;
const silent = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

describe('the workflow bundle of agent modules', () => {
  it('holds the workflow entry and none of the SDK Node-only code', async () => {
    const { code } = await testBundle();
    expect(code).toContain('src/workflow-entry.ts');
    expect(code).toContain('src/workflows/agent-workflow.ts');
    for (const nodeOnly of [
      '@anthropic-ai/sdk',
      'src/inline/',
      'src/activities/create-activities.ts',
      'src/activities/models/anthropic/messages.ts',
      'src/activities/tools/local-tools.ts',
      'src/activities/tools/tool-runner.ts',
      'src/cli/',
      'src/worker/',
      'src/index.ts',
    ]) {
      expect({ nodeOnly, found: code.includes(nodeOnly) }).toEqual({ nodeOnly, found: false });
    }
  });

  it("an agent module that imports node:fs in workflow code fails to bundle with Temporal's own error", async () => {
    await expect(bundleAgents(fixture('fs-agent.ts'), { logger: silent })).rejects.toThrow(
      /Your Workflow code \(or a library used by your Workflow code\) is importing the following disallowed modules:\s+- 'fs'/,
    );
  });
});

/** The bundle's inline source map. */
function sourceMapOf(code: string): { sources: string[]; sourcesContent?: Array<string | null>; mappings: string } {
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  return JSON.parse(Buffer.from(code.slice(code.indexOf('base64,', at) + 'base64,'.length).trim(), 'base64').toString('utf8'));
}

/** Whether V8 keeps `array` in dictionary mode (slow elements), through its natives syntax. */
function isDictionaryArray(array: unknown[]): boolean {
  setFlagsFromString('--allow-natives-syntax');
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('a', 'return %HasDictionaryElements(a)')(array) as boolean;
}

describe('bundling in the worker process', () => {
  it("leaves V8's fast Array.prototype.concat alone (webpack's back-compat shims broke it for the whole process)", async () => {
    const concatenated = () => [{ type: 'user' }].concat([{ type: 'assistant' }]);
    expect(isDictionaryArray(concatenated())).toBe(false);
    await bundleAgents(fixture('routing-calc.ts'), { logger: silent });
    expect(isDictionaryArray(concatenated())).toBe(false);
  });
});

describe("the bundle's source map", () => {
  it("names every source file and maps lines only, without the sources' text, unless asked to keep them", async () => {
    // The bundle is handled whole whenever a worker or a replay starts, and every workflow promise's stack
    // is mapped through it: without the text it is half the size, with lines only its mappings a quarter.
    const map = sourceMapOf((await testBundle()).code);
    expect(map.sources.some((s) => s.endsWith(path.join('src', 'workflows', 'agent-workflow.ts')))).toBe(true);
    expect((map.sourcesContent ?? []).filter((c) => c)).toEqual([]);
    const segmentsPerLine = (m: { mappings: string }) => Math.max(...m.mappings.split(';').map((line) => (line ? line.split(',').length : 0)));
    expect(segmentsPerLine(map)).toBe(1);
    const kept = sourceMapOf((await bundleAgents(fixture('routing-calc.ts'), { logger: silent, keepSources: true })).code);
    expect(kept.sourcesContent?.[kept.sources.findIndex((s) => s.endsWith('routing-calc.ts'))]).toContain('routeCalc');
    expect(segmentsPerLine(kept)).toBeGreaterThan(1);
  });

  it('bundled from the built package, it maps through the package\'s own maps to its TypeScript sources', async () => {
    // What users run: dist/ bundles dist/*.js, whose .js.map files point at src/*.ts (shipped with the package).
    const dist = path.resolve(__dirname, '../../dist/worker/index.js');
    expect(existsSync(dist)).toBe(true); // `npm test` builds first (pretest)
    const built = require(dist) as { bundleAgents: typeof bundleAgents };
    const map = sourceMapOf((await built.bundleAgents(fixture('routing-calc.ts'), { logger: silent })).code);
    expect(map.sources.filter((s) => /[\\/]workflows[\\/]agent-workflow\.[jt]s$/.test(s)).map((s) => path.relative(path.resolve(__dirname, '../..'), s))).toEqual([
      path.join('src', 'workflows', 'agent-workflow.ts'),
    ]);
  });

  it('a default worker\'s stack trace names the TypeScript source and line of each workflow frame', async () => {
    await withWaitingSession('stack-lines', {}, async (handle) => {
      // The session waits for a prompt in the SDK's session code: its frames map to src/workflows/*.ts lines.
      const trace = await handle.query<string>('__stack_trace');
      const frames = [...trace.matchAll(/\((.+?):(\d+):(\d+)\)/g)].filter(([, file]) => file!.includes(`${path.sep}src${path.sep}workflows${path.sep}`));
      expect(frames.length).toBeGreaterThan(0);
      for (const [, file, line] of frames) {
        expect(file).toMatch(/\.ts$/);
        expect(Number(line)).toBeGreaterThan(0);
      }
    });
  });

  it("a worker with showStackTraceSources shows the code in the enhanced stack trace (createWorker keeps the sources' text)", async () => {
    await withWaitingSession('stack-sources', { showStackTraceSources: true }, async (handle) => {
      // The session waits for a prompt: its stack is in the SDK's session code, whose text is shown.
      const trace = await handle.query<{ sources: Record<string, Array<{ content: string }>> }>('__enhanced_stack_trace');
      const shown = Object.entries(trace.sources).filter(([file]) => file.includes(`${path.sep}src${path.sep}`));
      expect(shown.length).toBeGreaterThan(0);
      expect(shown[0]![1][0]!.content.length).toBeGreaterThan(100);
    });
  });
});

/** A worker from createWorker (these options added) with one session waiting for its first prompt; `inspect` gets the session's workflow handle. */
async function withWaitingSession(name: string, options: { showStackTraceSources?: boolean }, inspect: (handle: WorkflowHandle) => Promise<void>): Promise<void> {
  const t = await testConnection();
  const store = new MemoryTranscriptStore();
  const taskQueue = `${name}-${process.pid}-${Date.now()}`;
  const worker = await createWorker({ agents: fixture('session-agents.ts'), connection: t.nativeConnection, namespace: t.namespace, taskQueue, model: { apiKey: 'test-key', baseURL: 'http://127.0.0.1:9' }, store, ...options });
  const client = new Client({ connection: t.connection, namespace: t.namespace, plugins: [new FabricHarnessPlugin({ store })] });
  try {
    await worker.runUntil(async () => {
      const session = await startSession(client, assistant, { id: `${name}-${Date.now()}`, taskQueue });
      await inspect(client.workflow.getHandle(session.id));
      await session.end();
    });
  } finally {
    await t.close();
  }
}

describe('tool code on the worker', () => {
  it('createWorker refuses to start when an agent declares a tool the worker has no code for', async () => {
    await expect(createWorker({ agents: fixture('declaring-agents.ts'), workflowBundle: { code: '' } })).rejects.toMatchObject({
      code: 'TOOL_NOT_REGISTERED',
      tool: 'lookup',
      message: expect.stringContaining('fh worker --tools'),
    });
    // With the module that implements it, the same agents have all their tool code.
    expect(collectToolCode([fixture('declaring-agents.ts')], [fixture('declaring-tools.ts')]).names()).toEqual(['lookup']);
  });

  it('a tool the model calls that the worker has no code for fails the run with TOOL_NOT_REGISTERED, without retries', async () => {
    const fake = await FakeAnthropicServer.start({ script: [callTools({ name: 'unimplemented', input: {} }), say('unreachable')] });
    const w = await startTestWorker({ name: 'orphan', baseURL: fake.url });
    try {
      const handle = await startAgent(w.client, orphan, { task: 'use the tool' }, { workflowId: `orphan-${Date.now()}`, taskQueue: w.taskQueue });
      const err = await handle.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WorkflowFailedError);
      // The typed failure is the run's failure itself (not under an ActivityFailure).
      const cause = (err as WorkflowFailedError).cause as any;
      expect(cause).toMatchObject({ type: 'TOOL_NOT_REGISTERED', nonRetryable: true });
      expect(cause?.message).toContain("Tool 'unimplemented'");
      const history = await w.client.workflow.getHandle(handle.workflowId).fetchHistory();
      const toolAttempts = history.events!.filter((e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt! > 1);
      expect(toolAttempts).toEqual([]);
    } finally {
      await w.stop();
      await fake.stop();
    }
  });
});
