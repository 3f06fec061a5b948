/**
 * Agent modules are workflow-safe by construction: their bundle holds none of the SDK's Node-only code,
 * Temporal's check for disallowed modules applies to them, and tool code reaches the worker once, from
 * the modules it loads. A tool the model calls that the worker has no code for fails the run.
 */
import * as path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, callTools, say } from '@fabric-harness/sdk/testing';
import { bundleAgents, createWorker } from '@fabric-harness/sdk/worker';
import { orphan } from '../fixtures/agents';
import { testBundle } from '../support/bundle';
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
