import { promises as fs, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker, type ReplayWorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { bundleAgents, FabricHarnessPlugin } from '@fabric-harness/sdk/worker';
import type { AgentEvent } from '@fabric-harness/sdk';
import { HISTORY_AGENT_MODULES } from '../histories/support/modules';

/** test/histories/<release>/<name>.json: histories recorded by every release, each replayed by every later one. */
const HISTORIES = path.resolve(__dirname, '../histories');
const NAMES = ['calculator-tools', 'threshold-compaction', 'overflow-compaction', 'manual-compaction'];
/** Recorded from 0.3.0 on: session workflows (approvals and an interrupt; both ends of a continue-as-new). */
const SESSION_NAMES = ['session-approvals', 'session-continued-first-run', 'session-continued-last-run'];
/**
 * Recorded from 0.4.0 on: context management — the overflow ladder (to purge-tool-results, and to
 * session-reset), SessionHandle.reset(), a compaction with memory flush and the next run loading the
 * memory, an artifact offloaded and read back, compaction.strategy 'auto' on a capable model, masking.
 */
const CONTEXT_NAMES = [
  'ladder-purge-tool-results',
  'ladder-session-reset',
  'session-reset',
  'memory-flush',
  'memory-flush-next-run',
  'artifact-offload',
  'server-strategy',
  'masking',
];
/** Recorded from 0.5.0 on: an MCP tool call (the tool list recorded), a sub-agent run and its child workflow. */
const ECOSYSTEM_NAMES = ['mcp-call', 'sub-agent-run', 'sub-agent-child'];
/**
 * Recorded from 0.5.0 on, by test/histories/record-flows.ts: a flow run (commands, a retry, a fan-out
 * whose branches are child workflows, a prompt node, a gate answered by an update, a route) and its
 * failed branch.
 */
const FLOW_NAMES = ['flow-release', 'flow-branch-failed'];
/**
 * Recorded from 0.6.7 on, by test/histories/record-worktrees.ts: a session forked into a child with its
 * own git worktree (the child's history), an agent whose sub-agent works in its own worktree (and the
 * sub-agent's child workflow), and both ends of a session's MCP pin carried across continue-as-new.
 */
const WORKTREE_NAMES = ['worktree-session-child', 'worktree-sub-agent-run', 'worktree-sub-agent-child', 'mcp-pin-continued-first-run', 'mcp-pin-continued-later-run'];
/**
 * Recorded from 0.6.7 on, by test/histories/record-gate.ts: threshold compactions whose summaries the
 * compaction gate checked (a local activity each, patch fh-compaction-gate) and restated facts into.
 */
const GATE_NAMES = ['gated-compaction'];
/** A flow names its branch workflows after its own id: its histories replay under the ids they ran with. */
const RECORDED_IDS: Record<string, string> = { 'flow-release': 'recorded-flow', 'flow-branch-failed': 'recorded-flow/b-1' };
const replayId = (id: string) => RECORDED_IDS[id.split('/').at(-1)!] ?? `recorded-${id}`;
/** Release folders compare as versions (0.10.0 after 0.4.0), not as strings. */
const byVersion = (a: string, b: string) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  return x!.map((n, i) => n - y![i]!).find((d) => d !== 0) ?? 0;
};
const since = (release: string, first: string) => byVersion(release, first) >= 0;
const namesOf = (release: string) => [
  ...NAMES,
  ...(since(release, '0.3.0') ? SESSION_NAMES : []),
  ...(since(release, '0.4.0') ? CONTEXT_NAMES : []),
  ...(since(release, '0.5.0') ? [...ECOSYSTEM_NAMES, ...FLOW_NAMES] : []),
  ...(since(release, '0.6.7') ? [...WORKTREE_NAMES, ...GATE_NAMES] : []),
];
/** The release folders (test/histories/support holds the recorder's agents, not histories). */
const RELEASES = readdirSync(HISTORIES, { withFileTypes: true })
  .filter((d) => d.isDirectory() && /^\d+\.\d+\.\d+$/.test(d.name))
  .map((d) => d.name)
  .sort(byVersion);
const VERSION = (require('../../package.json') as { version: string }).version;
/**
 * A folder past package.json's version is the next release's, recorded in part so far (a group recorded
 * with FH_RECORD_ONLY): it holds some of that release's names, and all of them once it is released.
 */
const unreleased = (release: string) => byVersion(release, VERSION) > 0;
const filesOf = (release: string) => readdirSync(path.join(HISTORIES, release)).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));
/** The histories a release holds: all of its names; the next release's, those recorded so far. */
const heldBy = (release: string) => (unreleased(release) ? namesOf(release).filter((n) => filesOf(release).includes(n)) : namesOf(release));
/** The releases that hold a history of this name (a released one must: the first test checks). */
const holding = (name: string) => RELEASES.filter((r) => heldBy(r).includes(name));
/** Every recorded history, as `<release>/<name>`. */
const ALL = RELEASES.flatMap((release) => heldBy(release).map((name) => `${release}/${name}`));

async function recorded(id: string) {
  return { workflowId: replayId(id), history: historyFromJSON(JSON.parse(await fs.readFile(path.join(HISTORIES, `${id}.json`), 'utf8'))) };
}

async function replayAll(bundle: WorkflowBundle, names: string[], plugin = new FabricHarnessPlugin()) {
  const results: Array<{ workflowId: string; error?: Error }> = [];
  const histories = await Promise.all(names.map(recorded));
  for await (const r of Worker.runReplayHistories({ workflowBundle: bundle, plugins: [plugin] }, histories)) {
    results.push({ workflowId: r.workflowId, error: r.error });
  }
  return results;
}

/** Every module whose workflows the histories ran, bundled once (test/histories/support/modules.ts). */
let bundled: Promise<WorkflowBundle> | undefined;
const historyBundle = () => (bundled ??= bundleAgents(HISTORY_AGENT_MODULES, { logger: quiet }));

describe('recorded histories replay against the current workflow code', () => {
  const names = ALL;
  /**
   * Every history replayed once, for the two tests that read it: with the plugin's sinks observed and
   * called while history replays (forced on), so one pass shows both that everything replays and that
   * workflow code makes no event sink call on replay. (Each pass over every release's histories takes
   * 30-35 s in a full run; the sink test used to make two more.)
   */
  const observed = { events: [] as AgentEvent[], warned: [] as string[] };
  let replayedOnce: ReturnType<typeof replayAll> | undefined;
  const replayEvery = () => (replayedOnce ??= historyBundle().then((bundle) => replayAll(bundle, names, new SinkObservingPlugin(observed.events, true, observed.warned))));

  it('every history recorded by every release replays without a determinism error', async () => {
    expect(RELEASES).toEqual(expect.arrayContaining(['0.1.0', '0.2.0', '0.3.0', '0.4.0']));
    for (const release of RELEASES) {
      const files = filesOf(release);
      if (unreleased(release)) expect([release, files.filter((f) => !namesOf(release).includes(f))]).toEqual([release, []]);
      else expect([release, files.sort()]).toEqual([release, namesOf(release).sort()]);
      expect(heldBy(release).length).toBeGreaterThan(0);
    }
    const results = await replayEvery();
    expect(results.map((r) => [r.workflowId, r.error?.message])).toEqual(names.map((n) => [replayId(n), undefined]));
    // Bundling, then every release's histories (more with each release): 20-25 s alone, but 60-120 s
    // and once over the default 120 s in a full run on 2 cores, sharing them with another heavy suite.
  }, 300_000);

  it('each context-management history holds what it was recorded for (so replaying it exercises that code)', async () => {
    const release = holding('ladder-purge-tool-results');
    expect(release.length).toBeGreaterThan(0);
    for (const r of release) {
      const h = async (name: string) => (await recorded(`${r}/${name}`)).history;
      expect(ladderSteps(await h('ladder-purge-tool-results'))).toEqual(['emergency-compaction', 'purge-tool-results']);
      expect(ladderSteps(await h('ladder-session-reset'))).toEqual(['emergency-compaction', 'purge-tool-results', 'drop-injected', 'session-reset']);
      const reset = await h('session-reset');
      expect(updates(reset)).toEqual(['fh.session.prompt', 'fh.session.reset', 'fh.session.prompt', 'fh.session.end']);
      expect(payloadText(reset)).toContain('TRANSFER-NOTE');
      expect(activities(await h('memory-flush'))).toContain('fhFlushMemory');
      expect(payloadText(await h('memory-flush-next-run'))).toContain('ship on Fridays only');
      const artifact = payloadText(await h('artifact-offload'));
      expect(artifact).toContain('"artifact":{"ref":"');
      expect(artifact).toContain('[characters 20-60 of 307200');
      expect(payloadText(await h('server-strategy'))).toMatch(/"strategy":\{"strategy":"server"/);
      expect(payloadText(await h('masking'))).toMatch(/"mask":\{"before":\d+,"ids":\["[^"]+"/);
    }
  });

  it('the session approvals history holds the approval in its memo since 0.6.5 (set at the request, removed at the decision)', async () => {
    for (const r of holding('session-approvals')) {
      const h = (await recorded(`${r}/session-approvals`)).history;
      const memo = h.events!.filter((e) => e.workflowPropertiesModifiedEventAttributes).map((e) => Object.keys(e.workflowPropertiesModifiedEventAttributes!.upsertedMemo?.fields ?? {}));
      expect([r, memo]).toEqual([r, since(r, '0.6.5') ? [['fh.session.approvals'], ['fh.session.approvals']] : []]);
    }
  });

  it('the continued session runs read the history-limit rule since 0.6.6 (its patch marker in each run)', async () => {
    for (const r of holding('session-continued-first-run')) {
      for (const name of ['session-continued-first-run', 'session-continued-last-run']) {
        const ids = patchIds((await recorded(`${r}/${name}`)).history);
        expect([r, name, ids.includes('fh-session-limit-after-turn')]).toEqual([r, name, since(r, '0.6.6')]);
      }
    }
  });

  it('each flow history holds what it was recorded for (so replaying it exercises that code)', async () => {
    for (const r of holding('flow-release')) {
      const flow = (await recorded(`${r}/flow-release`)).history;
      expect(activities(flow)).toEqual(expect.arrayContaining(['fhFlowCommit', 'fhTool', 'fhModel']));
      expect(updates(flow)).toEqual(['fh.flow.gate']);
      expect(flow.events!.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowType!.name)).toEqual(['fhFlowBranch', 'fhFlowBranch']);
      const text = payloadText(flow);
      expect(text).toContain('"internal.retry_count.flaky":1');
      expect(text).toContain('"parallel.fan_in.best_id":"a"');
      expect(text).toContain('shipped');
      expect(payloadText((await recorded(`${r}/flow-branch-failed`)).history)).toContain('b-broke');
      // Since 0.6.4 the run keeps the gate it waits at in its memo: set at the gate, removed once answered.
      const memo = flow.events!.filter((e) => e.workflowPropertiesModifiedEventAttributes).map((e) => Object.keys(e.workflowPropertiesModifiedEventAttributes!.upsertedMemo?.fields ?? {}));
      expect(memo).toEqual(since(r, '0.6.4') ? [['fh.flow.gates'], ['fh.flow.gates']] : []);
    }
  });

  it('the ecosystem histories hold what they were recorded for', async () => {
    for (const r of holding('mcp-call')) {
      const mcp = (await recorded(`${r}/mcp-call`)).history;
      expect(activities(mcp).filter((a) => a === 'fhMcpList')).toHaveLength(1);
      expect(payloadText(mcp)).toContain('"name":"count"');
      expect(payloadText(mcp)).toContain('deliberate failure');
      const sub = (await recorded(`${r}/sub-agent-run`)).history;
      expect(sub.events!.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toHaveLength(1);
      expect(payloadText(await recorded(`${r}/sub-agent-child`).then((x) => x.history))).toContain('"fhSubAgent"');
    }
  });

  it('the gated-compaction history holds what it was recorded for: the patch marker, a gate check per compaction, the rule restated', async () => {
    const releases = holding('gated-compaction');
    expect(releases.length).toBeGreaterThan(0);
    for (const r of releases) {
      const history = (await recorded(`${r}/gated-compaction`)).history;
      const text = payloadText(history);
      expect(text).toContain('fh-compaction-gate');
      const checks = text.match(/"activity_type":"fhCheckSummaryGate"/g) ?? [];
      expect(checks.length).toBeGreaterThanOrEqual(1);
      expect(text).toContain('"missing":[{"kind":"rule"');
      expect(text).toContain('## Facts Restated');
    }
  });

  it('the worktree histories hold what they were recorded for: the worktree activities around the work, the child workflow', async () => {
    const worktreeReleases = holding('worktree-session-child');
    expect(worktreeReleases.length).toBeGreaterThan(0);
    for (const r of worktreeReleases) {
      // The forked session: its worktree made on its first run, its tool run there, the worktree finished at its end.
      const child = (await recorded(`${r}/worktree-session-child`)).history;
      expect(activities(child).filter((a) => ['fhWorktreeCreate', 'fhTool', 'fhWorktreeFinish'].includes(a))).toEqual(['fhWorktreeCreate', 'fhTool', 'fhWorktreeFinish']);
      expect(updates(child)).toEqual(['fh.session.prompt', 'fh.session.end']);
      const childText = payloadText(child);
      expect(childText).toContain('"isolation":"worktree"');
      expect(childText).toMatch(/"branch":"fh\/session-[^"]+"/);
      expect(childText).toContain('from the child');

      // The sub-agent: a worktree made before its child workflow starts and finished after it ends.
      const run = (await recorded(`${r}/worktree-sub-agent-run`)).history;
      const order = (run.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? (e.startChildWorkflowExecutionInitiatedEventAttributes ? 'child' : []));
      expect(order.filter((a) => a !== 'fhModel' && a !== 'fhResolveModel' && a !== 'fhStorePrelude')).toEqual(['fhWorktreeCreate', 'child', 'fhWorktreeFinish']);
      expect(childWorkflows(run)).toEqual(['eco-helper']);
      expect(payloadText(run)).toMatch(/committed on branch fh\/eco-helper-[^\s]+ \(commit [0-9a-f]{12}\)/);
      const sub = (await recorded(`${r}/worktree-sub-agent-child`)).history;
      expect(payloadText(sub)).toMatch(/"fhSubAgent":\{[^]*"cwd":"[^"]+"/);
      expect(activities(sub)).toContain('fhTool');
      expect(payloadText(sub)).toContain('from the sub-agent');
    }
  });

  it("the carried-pin histories: the first run pins the MCP server; a later run lists and calls it on the carried queue, with the patch's marker and no fhMcpPin", async () => {
    const pinReleases = holding('mcp-pin-continued-first-run');
    expect(pinReleases.length).toBeGreaterThan(0);
    for (const r of pinReleases) {
      const first = (await recorded(`${r}/mcp-pin-continued-first-run`)).history;
      const later = (await recorded(`${r}/mcp-pin-continued-later-run`)).history;
      expect(activities(first).filter((a) => a === 'fhMcpPin')).toHaveLength(1);
      expect(patchIds(first)).toContain('fh-mcp-pin');
      expect(patchIds(first)).not.toContain('fh-mcp-pin-carried');
      expect(patchIds(later)).toEqual(expect.arrayContaining(['fh-mcp-pin', 'fh-mcp-pin-carried']));
      expect(activities(later)).not.toContain('fhMcpPin');
      // Both runs continued as new, and the later one's list and call went to the queue the first run pinned.
      for (const h of [first, later]) expect(h.events!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
      const pinned = queuesOf(first, 'fhMcpList')[0]!;
      expect(pinned).toContain(':mcp-');
      expect(queuesOf(later, 'fhMcpList')).toEqual([pinned]);
      expect(queuesOf(later, 'fhTool')).toEqual([pinned]);
    }
  });

  it('the event sink the plugin registers does not fire on replay (observed, with a positive control)', async () => {
    // As registered, the plugin's replay worker has Temporal drop every call its sinks get while history
    // replays, so a listener passed to the plugin could see nothing whatever workflow code did.
    const registered = new FabricHarnessPlugin().configureReplayWorker({ workflowBundle: await historyBundle() });
    const fabric = (registered.sinks as Record<string, Record<string, { callDuringReplay?: boolean }>>).fabric!;
    expect(Object.keys(fabric).sort()).toEqual(['event', 'warnOnce']);
    for (const sink of Object.values(fabric)) expect(sink.callDuringReplay).toBe(false);

    // With callDuringReplay forced on (the one replay of every history above), still no event: workflow
    // code makes no event sink call while history replays (the worker would only drop it). Control: the
    // same observer does see the other sink's calls that workflow code still makes on replay (the
    // once-per-process warning), so the empty array is not an observer that never fires.
    const results = await replayEvery();
    expect(results.filter((r) => r.error)).toEqual([]);
    expect(observed.events).toEqual([]);
    expect(observed.warned.length).toBeGreaterThan(0);
  }, 300_000);

  it('changing the workflow command order makes replay fail', async () => {
    const changed = await bundleAgents([path.resolve(__dirname, '../fixtures/replay-variants.ts')], { logger: quiet });
    const [result] = await replayAll(changed, [`${holding('calculator-tools').at(-1)}/calculator-tools`]);
    expect(result.error).toBeInstanceOf(DeterminismViolationError);
  });

  it('a history recorded under one compaction setting replays under another', async () => {
    const changed = await bundleAgents([path.resolve(__dirname, '../fixtures/replay-variants.ts')], { logger: quiet });
    const ids = holding('threshold-compaction').flatMap((r) => [`${r}/threshold-compaction`, `${r}/overflow-compaction`]);
    const results = await replayAll(changed, ids);
    expect(results.map((r) => r.error?.message)).toEqual(ids.map(() => undefined));
  });
});

type History = Awaited<ReturnType<typeof recorded>>['history'];

/** Every payload of a history, decoded as text (the harness's payloads are JSON). */
function payloadText(history: History): string {
  const out: string[] = [];
  const visit = (v: unknown): void => {
    if (v instanceof Uint8Array) out.push(Buffer.from(v).toString());
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') Object.values(v).forEach(visit);
  };
  visit(history.events);
  return out.join('\n');
}

/** The overflow-ladder steps a history's recorded decisions applied, in order. */
const ladderSteps = (history: History) => [...payloadText(history).matchAll(/"ladderStep":"([a-z-]+)"/g)].map((m) => m[1]);
const updates = (history: History) => (history.events ?? []).flatMap((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? []);
const activities = (history: History) => (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
/** The task queues the history scheduled activities of this type on. */
const queuesOf = (history: History, type: string) =>
  (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name === type ? [e.activityTaskScheduledEventAttributes.taskQueue!.name!] : []));
const childWorkflows = (history: History) => (history.events ?? []).flatMap((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name ?? []);
/** The patch ids of a history's patch markers, in order. */
const patchIds = (history: History) =>
  (history.events ?? [])
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .flatMap((e) => e.markerRecordedEventAttributes!.details?.['patch-data']?.payloads ?? [])
    .map((p) => (JSON.parse(Buffer.from(p.data!).toString('utf8')) as { id: string }).id);

/** The real plugin, with the `fabric.event` sink it registers for replay wrapped to record every call. */
class SinkObservingPlugin extends FabricHarnessPlugin {
  constructor(
    private readonly seen: AgentEvent[],
    private readonly forceCallDuringReplay?: boolean,
    /** The warning sink's keys, as it is called (observed only when given). */
    private readonly warned?: string[],
  ) {
    super();
  }

  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    const configured = super.configureReplayWorker(options);
    const fabric = (configured.sinks as Record<string, Record<string, { fn: (...args: any[]) => void; callDuringReplay?: boolean }>>).fabric!;
    const event = fabric.event!;
    const observed = {
      fn: (info: unknown, e: AgentEvent) => {
        this.seen.push(e);
        event.fn(info, e);
      },
      callDuringReplay: this.forceCallDuringReplay ?? event.callDuringReplay,
    };
    const warnOnce = fabric.warnOnce!;
    const warned = this.warned;
    const warnObserved = warned
      ? { fn: (_info: unknown, key: string) => void warned.push(key), callDuringReplay: this.forceCallDuringReplay ?? warnOnce.callDuringReplay }
      : warnOnce;
    return { ...configured, sinks: { ...configured.sinks, fabric: { ...fabric, event: observed, warnOnce: warnObserved } } };
  }
}

const noop = () => undefined;
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
