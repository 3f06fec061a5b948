/**
 * `fh flow run|show|gate|resume|history`: flow runs from the terminal. A bad DOT file, a bad --set
 * and an unknown gate choice are usage errors (exit 2) at once, naming what is wrong.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { FlowHandle } from '../../client/flows';
import { DEFAULT_TASK_QUEUE } from '../../client/start';
import { FabricError } from '../../core/errors';
import type { FlowContext } from '../../core/flows/context';
import type { FlowState } from '../../wire/flow-messages';
import { flag, JSON_OPTION, str, strs, type Parsed } from '../args';
import { asCliError, connect, printJson, STORE_OPTION, storeFrom, type Command, type Io } from '../context';
import { CliError, EXIT, notFound, oneLine, usage } from '../errors';

/** Typed errors exit as the error-code registry says (bad input: 2, a usage error). */
function flowError(err: unknown, workflowId?: string): CliError {
  return asCliError(err, workflowId ? { workflowId } : {});
}

const RUN_OPTIONS = {
  goal: { type: 'string', value: '<text>', help: "the run's goal (overrides the graph's goal attribute)" },
  set: { type: 'string', multiple: true, value: '<key=value>', help: 'an initial context value (JSON if it parses, else text); repeatable' },
  'work-dir': { type: 'string', value: '<dir>', help: 'the sandbox directory on the worker (command nodes run there)', default: 'the current directory' },
  'workflow-id': { type: 'string', short: 'w', value: '<id>', help: 'workflow id', default: 'flow-<name>-<time>' },
  'task-queue': { type: 'string', short: 'q', value: '<name>', help: 'task queue of the worker', default: DEFAULT_TASK_QUEUE },
  model: { type: 'string', value: '<model>', help: 'model for prompt nodes (default: the worker’s)' },
  'no-wait': { type: 'boolean', help: 'print the workflow id and return at once' },
  ...JSON_OPTION,
  ...STORE_OPTION,
} as const;

const runCommand: Command = {
  name: 'flow run',
  summary: 'start a flow (a DOT graph of stages) as a workflow and wait for it',
  usage: ['flow run <file.dot> [--goal <text>] [--set key=value]… [--work-dir <dir>] [--no-wait] [--json]'],
  description: 'The DOT file is parsed and checked here: a bad graph is refused before anything starts.',
  connects: true,
  options: RUN_OPTIONS,
  examples: ['fh flow run ship.dot --goal "Add a /health endpoint" --set tests_passed=false', 'fh flow run ship.dot --no-wait --json'],
  run: async (p, io) => {
    const [file, ...extra] = p.positionals;
    if (!file) throw usage('fh flow run needs the DOT file: fh flow run <file.dot>');
    if (extra.length) throw usage(`unexpected argument '${extra[0]}'`);
    let dot: string;
    try {
      dot = await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`flow file ${file} not found`);
      throw err;
    }
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const flows = require('../../client/flows') as typeof import('../../client/flows');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { parseSetting, checkUserContext } = require('../../core/flows/context') as typeof import('../../core/flows/context');
    let graph;
    const context: FlowContext = {};
    try {
      graph = flows.loadFlow(dot);
      for (const s of strs(p, 'set')) {
        const [k, v] = parseSetting(s);
        context[k] = v;
      }
      checkUserContext(context);
    } catch (err) {
      throw flowError(err);
    }
    const conn = await connect(p);
    try {
      let handle: FlowHandle;
      try {
        handle = await flows.startFlow(conn.client, graph, {
          workDir: path.resolve(str(p, 'work-dir') ?? process.cwd()),
          ...(str(p, 'goal') !== undefined ? { goal: str(p, 'goal')! } : {}),
          ...(Object.keys(context).length ? { context } : {}),
          ...(str(p, 'workflow-id') ? { workflowId: str(p, 'workflow-id')! } : {}),
          taskQueue: str(p, 'task-queue') ?? DEFAULT_TASK_QUEUE,
          ...(str(p, 'model') ? { model: str(p, 'model')! } : {}),
        });
      } catch (err) {
        throw flowError(err);
      }
      return await finish(handle, p, io);
    } finally {
      await conn.close();
    }
  },
};

async function finish(handle: FlowHandle, p: Parsed, io: Io): Promise<number> {
  const json = flag(p, 'json');
  if (flag(p, 'no-wait')) {
    if (json) printJson(io, { workflowId: handle.workflowId, status: 'RUNNING' });
    else io.out(handle.workflowId);
    return EXIT.OK;
  }
  if (!json) io.err(`[fh flow] started ${handle.workflowId}; waiting (gates: fh flow gate ${handle.workflowId} <choice>)`);
  try {
    const result = await handle.result();
    if (json) printJson(io, { workflowId: handle.workflowId, status: 'COMPLETED', result });
    else io.out(`${handle.workflowId} completed at ${result.exit} after ${result.stages} stages`);
    return EXIT.OK;
  } catch (err) {
    if (!(err instanceof FabricError)) throw asCliError(err, { workflowId: handle.workflowId });
    if (json) {
      printJson(io, { workflowId: handle.workflowId, status: 'FAILED', error: { code: err.code, message: err.message } });
      return EXIT.FAILURE;
    }
    throw new CliError(EXIT.FAILURE, `flow ${handle.workflowId} failed: ${oneLine(err.message)} [${err.code}]; resume with \`fh flow resume ${handle.workflowId}\``);
  }
}

/** The state as `show --json` prints it: the graph (nodes with their state, edges) and the context. */
export function flowView(workflowId: string, s: FlowState) {
  return {
    workflowId,
    status: s.status,
    currentNode: s.currentNode ?? null,
    graph: s.graph
      ? {
          name: s.graph.name,
          attrs: s.graph.attrs,
          nodes: s.graph.nodes.map((n) => ({ id: n.id, kind: n.kind, label: n.label, state: s.nodeStates[n.id] ?? 'pending', ...(n.threadId ? { threadId: n.threadId } : {}) })),
          edges: s.graph.edges.map((e) => ({ from: e.from, to: e.to, ...(e.label ? { label: e.label } : {}), ...(e.condition ? { condition: e.condition } : {}) })),
        }
      : null,
    context: s.context,
    waitingGate: s.waitingGate ?? null,
    waitingGates: s.waitingGates ?? [],
    failedNode: s.failedNode ?? null,
    failure: s.failure ?? null,
    stages: s.stages,
    events: s.events,
  };
}

function withHandle(name: string, summary: string, usageLine: string, extra: Command['options'], body: (h: FlowHandle, p: Parsed, io: Io, rest: string[]) => Promise<number>, examples: string[]): Command {
  return {
    name: `flow ${name}`,
    summary,
    usage: [usageLine],
    connects: true,
    options: { ...extra, ...JSON_OPTION, ...STORE_OPTION },
    examples,
    run: async (p, io) => {
      const [id, ...rest] = p.positionals;
      if (!id) throw usage(`fh flow ${name} needs the flow's workflow id: fh ${usageLine}`);
      const conn = await connect(p);
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const flows = require('../../client/flows') as typeof import('../../client/flows');
        return await body(flows.getFlowHandle(conn.client, id), p, io, rest).catch((err: unknown) => {
          throw flowError(err, id);
        });
      } finally {
        await conn.close();
      }
    },
  };
}

const showCommand = withHandle('show', "a flow's graph with each node's state, and its context", 'flow show <workflow-id> [--json]', {}, async (h, p, io) => {
  const view = flowView(h.workflowId, await h.state());
  if (flag(p, 'json')) return (printJson(io, view), EXIT.OK);
  const lines = [`${view.workflowId}: ${view.status}${view.currentNode ? ` at ${view.currentNode}` : ''}`];
  for (const g of view.waitingGates) {
    lines.push(`waiting at gate ${g.node}${g.branch !== undefined ? ` in branch ${g.branch}` : ''}: ${g.choices.map((c) => (c.label.startsWith(`[${c.key}]`) ? c.label : `[${c.key}] ${c.label}`)).join(', ')}`);
  }
  if (view.failure) lines.push(`failed${view.failedNode ? ` at ${view.failedNode}` : ''}: ${oneLine(view.failure)}`);
  lines.push('', 'Nodes:', ...(view.graph?.nodes ?? []).map((n) => `  ${n.state.padEnd(8)} ${n.id} (${n.kind})`));
  lines.push('', 'Edges:', ...(view.graph?.edges ?? []).map((e) => `  ${e.from} -> ${e.to}${e.label ? ` "${e.label}"` : ''}${e.condition ? ` if ${e.condition}` : ''}`));
  lines.push('', 'Context:', ...Object.entries(view.context).map(([k, v]) => `  ${k} = ${short(v)}`));
  io.out(lines.join('\n'));
  return EXIT.OK;
}, ['fh flow show flow-ship-abc', 'fh flow show flow-ship-abc --json']);

const GATE_OPTIONS = {
  text: { type: 'string', value: '<text>', help: 'free text with the choice (or with the choice `freeform`)' },
  branch: { type: 'string', value: '<node>', help: 'the parallel branch (its first node) whose gate to answer, when gates wait in several' },
  gate: { type: 'string', value: '<node>', help: 'the gate node to answer (refused if another one waits)' },
} as const;

const gateCommand = withHandle('gate', 'answer the gate a flow waits at (in the run or in a parallel branch)', 'flow gate <workflow-id> <choice> [--text <text>] [--branch <node>] [--gate <node>]', GATE_OPTIONS, async (h, p, io, rest) => {
  const choice = rest[0];
  if (!choice) throw usage('fh flow gate needs the choice: its accelerator key or label');
  const [text, branch, gate] = [str(p, 'text'), str(p, 'branch'), str(p, 'gate')];
  const decision = await h.gate(choice, { ...(text !== undefined ? { text } : {}), ...(branch !== undefined ? { branch } : {}), ...(gate !== undefined ? { gate } : {}) });
  if (flag(p, 'json')) printJson(io, decision);
  else io.out(`${decision.gate}: ${decision.label}`);
  return EXIT.OK;
}, ['fh flow gate flow-ship-abc A', 'fh flow gate flow-ship-abc freeform --text "ship it behind a flag"', 'fh flow gate flow-ship-abc A --branch review_ui']);

const resumeCommand = withHandle('resume', 'start a new run from where a failed flow stopped, with its saved context', 'flow resume <workflow-id> [--no-wait] [--json]', { 'no-wait': RUN_OPTIONS['no-wait'], 'workflow-id': RUN_OPTIONS['workflow-id'] }, async (h, p, io) => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const flows = require('../../client/flows') as typeof import('../../client/flows');
  const next = await flows.resumeFlow(h.client, h.workflowId, str(p, 'workflow-id') ? { workflowId: str(p, 'workflow-id')! } : {});
  return finish(next, p, io);
}, ['fh flow resume flow-ship-abc']);

const historyCommand = withHandle('history', "a flow run stage by stage, from its Temporal history: each stage's context updates, gate answers, branches", 'flow history <workflow-id> [--json]', {}, async (h, p, io) => {
  // From the history itself, not a query: it needs no worker and shows what was recorded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { flowAudit } = require('../../audit/flow-audit') as typeof import('../../audit/flow-audit');
  const entries = await flowAudit(await h.workflow.fetchHistory(), { store: storeFrom(p) });
  if (flag(p, 'json')) return (printJson(io, entries), EXIT.OK);
  const lines: string[] = [];
  let n = 0;
  for (const e of entries) {
    if (e.kind === 'stage') {
      const outcome = typeof e.updates.outcome === 'string' ? `: ${e.updates.outcome}` : '';
      lines.push(`${++n}. ${e.node} #${e.visit}${e.attempt > 1 ? ` (${e.attempt} attempts)` : ''}${outcome}  [event ${e.eventId}]`);
      for (const [k, v] of Object.entries(e.updates)) lines.push(`   ${k} = ${short(v)}`);
    } else if (e.kind === 'gate') lines.push(`   gate answered: ${short(e.answer)}  [event ${e.eventId}]`);
    else lines.push(`   branch started: ${e.workflowId}  [event ${e.eventId}]`);
  }
  io.out(lines.join('\n') || '(no stages yet)');
  return EXIT.OK;
}, ['fh flow history flow-ship-abc', 'fh flow history flow-ship-abc --json']);

/** A value for one terminal line. Values may be model output: control characters (escape sequences) are shown as `?`. */
function short(v: unknown): string {
  const s = (typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v))).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '?');
  return oneLine(s.length > 120 ? `${s.slice(0, 120)}…` : s);
}

const SUBCOMMANDS = [runCommand, showCommand, gateCommand, resumeCommand, historyCommand];

export const flowCommand: Command = {
  name: 'flow',
  summary: 'flows: runs of stages (DOT graphs) sharing a context — run, show, gate, resume, history',
  usage: SUBCOMMANDS.map((c) => c.usage[0]!),
  options: {},
  connects: false,
  examples: ['fh flow run ship.dot --goal "Add a /health endpoint"', 'fh flow show flow-ship-abc --json', 'fh flow gate flow-ship-abc A'],
  subcommands: Object.fromEntries(SUBCOMMANDS.map((c) => [c.name.slice('flow '.length), c])),
  run: async () => {
    throw usage(`say which: fh flow <command>, one of ${SUBCOMMANDS.map((c) => c.name.slice('flow '.length)).join(', ')} (fh flow --help)`);
  },
};
