import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { bundleAgents, FabricHarnessPlugin } from '@fabric-harness/sdk/worker';
import type { AgentEvent } from '@fabric-harness/sdk';
import { testBundle } from '../support/bundle';

const HISTORIES = path.resolve(__dirname, '../histories');

async function recorded(name: string) {
  return { workflowId: `recorded-${name}`, history: historyFromJSON(JSON.parse(await fs.readFile(path.join(HISTORIES, `${name}.json`), 'utf8'))) };
}

async function replayAll(bundle: WorkflowBundle, names: string[], plugin = new FabricHarnessPlugin()) {
  const results: Array<{ workflowId: string; error?: Error }> = [];
  const histories = await Promise.all(names.map(recorded));
  for await (const r of Worker.runReplayHistories({ workflowBundle: bundle, plugins: [plugin] }, histories)) {
    results.push({ workflowId: r.workflowId, error: r.error });
  }
  return results;
}

describe('recorded histories replay against the current workflow code', () => {
  const names = ['calculator-tools', 'threshold-compaction', 'overflow-compaction', 'manual-compaction'];

  it('every committed history replays without a determinism error, and emits no events again', async () => {
    const files = (await fs.readdir(HISTORIES)).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));
    expect(files.sort()).toEqual([...names].sort());
    const emitted: AgentEvent[] = [];
    const results = await replayAll(await testBundle(), names, new FabricHarnessPlugin({ onEvent: (e) => emitted.push(e) }));
    expect(results.map((r) => [r.workflowId, r.error?.message])).toEqual(names.map((n) => [`recorded-${n}`, undefined]));
    expect(emitted).toEqual([]); // sinks do not fire on replay
  });

  it('changing the workflow command order makes replay fail', async () => {
    const changed = await bundleAgents([path.resolve(__dirname, '../fixtures/replay-variants.ts')], { logger: quiet });
    const [result] = await replayAll(changed, ['calculator-tools']);
    expect(result.error).toBeInstanceOf(DeterminismViolationError);
  });

  it('a history recorded under one compaction setting replays under another', async () => {
    const changed = await bundleAgents([path.resolve(__dirname, '../fixtures/replay-variants.ts')], { logger: quiet });
    const results = await replayAll(changed, ['threshold-compaction', 'overflow-compaction']);
    expect(results.map((r) => r.error?.message)).toEqual([undefined, undefined]);
  });
});

const noop = () => undefined;
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
