/** fh list, fh state, fh budget: what is running and how full its context is. */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { AGENT_QUERIES } from '../../client/agent-handle';
import { AGENT_MEMO_KEY } from '../../client/start';
import type { ContextBudget } from '../../core/budget';
import type { CompactionState } from '../../core/conversation';
import { flag, int, JSON_OPTION, str, type Parsed } from '../args';
import { stateFromHistory, type HistoryRunState } from '../../audit/history-state';
import type { History } from '../../audit/history-file';
import { isoTime } from '../../audit/history-fields';
import { asCliError, connect, printJson, STORE_OPTION, storeFrom, type Command, type Connected, type Io } from '../context';
import { EXIT, failure, GRPC, grpcCode, oneLine, usage } from '../errors';
import { formatBudget, formatCompactionState, formatHistoryBudget, formatHistoryState, formatTime, table } from '../render';
import { isNoPollerError, noPollerMessage } from '../waiting';

export const listCommand: Command = {
  name: 'list',
  summary: 'list agent runs: workflow id, agent, status, start time',
  usage: ['list [--agent <name>] [--status <status>] [--limit 20] [--all] [--query <visibility query>]'],
  description:
    'Lists the newest runs started with the harness (the ones with an `fh.agent` memo; --all lists every workflow).',
  connects: true,
  options: {
    agent: { type: 'string', short: 'a', value: '<name>', help: 'only runs of this agent' },
    status: { type: 'string', short: 's', value: '<status>', help: 'running, completed, failed, canceled, terminated, timed_out, continued_as_new' },
    limit: { type: 'string', short: 'l', value: '<n>', help: 'at most this many runs', default: '20' },
    all: { type: 'boolean', help: 'include workflows that are not agent runs' },
    query: { type: 'string', value: '<query>', help: 'a visibility query to AND with the filters' },
    ...JSON_OPTION,
  },
  examples: ['fh list', 'fh list --agent researcher --status running', 'fh list --json --limit 100'],
  run: (p, io) => runList(p, io),
};

const STATUSES: Record<string, string> = {
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  canceled: 'Canceled',
  cancelled: 'Canceled',
  terminated: 'Terminated',
  timed_out: 'TimedOut',
  timedout: 'TimedOut',
  continued_as_new: 'ContinuedAsNew',
};

function quoteQuery(v: string): string {
  return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

async function runList(p: Parsed, io: Io): Promise<number> {
  if (p.positionals.length > 0) throw usage(`unexpected argument '${p.positionals[0]}' (fh list filters with --agent / --status)`);
  const limit = int(p, 'limit', 20, 1);
  const clauses: string[] = [];
  const agent = str(p, 'agent');
  if (agent) clauses.push(`WorkflowType = ${quoteQuery(agent)}`);
  const status = str(p, 'status');
  if (status) {
    const s = STATUSES[status.toLowerCase()];
    if (!s) throw usage(`--status must be one of ${Object.keys(STATUSES).filter((k) => k !== 'cancelled' && k !== 'timedout').join(', ')}; got '${status}'`);
    clauses.push(`ExecutionStatus = ${quoteQuery(s)}`);
  }
  const raw = str(p, 'query');
  if (raw) clauses.push(`(${raw})`);
  const all = flag(p, 'all');

  const conn = await connect(p);
  try {
    const rows: Array<{ workflowId: string; runId: string; agent: string | undefined; type: string; status: string; startTime: Date; closeTime?: Date; taskQueue: string }> = [];
    try {
      for await (const wf of conn.client.workflow.list({ query: clauses.join(' AND ') || undefined, pageSize: Math.min(1000, Math.max(limit, 100)) })) {
        const memoAgent = wf.memo?.[AGENT_MEMO_KEY];
        if (!all && typeof memoAgent !== 'string') continue;
        rows.push(row(wf, typeof memoAgent === 'string' ? memoAgent : undefined));
        if (rows.length >= limit) break;
      }
    } catch (err) {
      if (grpcCode(err) === 3 /* INVALID_ARGUMENT */) throw usage(`the server rejected the query: ${oneLine((err as Error).message)}`);
      throw asCliError(err, { settings: conn.settings });
    }
    if (flag(p, 'json')) {
      printJson(io, rows);
      return EXIT.OK;
    }
    if (rows.length === 0) {
      io.out(`No ${all ? 'workflows' : 'agent runs'} found${clauses.length ? ' for that filter' : ''} in namespace ${conn.settings.namespace}. Start one with \`fh run <agent> --input <json>\`.`);
      return EXIT.OK;
    }
    io.out(
      table(
        ['WORKFLOW ID', 'AGENT', 'STATUS', 'STARTED (UTC)', 'CLOSED (UTC)'],
        rows.map((r) => [r.workflowId, r.agent ?? `(${r.type})`, r.status, formatTime(r.startTime), formatTime(r.closeTime)]),
      ),
    );
    return EXIT.OK;
  } finally {
    await conn.close();
  }
}

function row(wf: WorkflowExecutionInfo, agent: string | undefined) {
  return {
    workflowId: wf.workflowId,
    runId: wf.runId,
    agent,
    type: wf.type,
    status: wf.status.name,
    startTime: wf.startTime,
    ...(wf.closeTime ? { closeTime: wf.closeTime } : {}),
    taskQueue: wf.taskQueue,
  };
}

const QUERY_OPTIONS = {
  session: { type: 'string' as const, value: '<id>', help: 'session id (default: the first session)' },
  'run-id': { type: 'string' as const, value: '<run-id>', help: 'a specific run (default: the latest)' },
  timeout: {
    type: 'string' as const,
    value: '<seconds>',
    help: 'how long to wait for a worker to answer (an ended run: 3 s, then its history is read)',
    default: '10',
  },
  ...STORE_OPTION,
  ...JSON_OPTION,
};

const FROM_HISTORY =
  'A run that has ended is read from its history when no worker answers (no worker polls its task queue, or none answers\n' +
  'within 3 s): the recorded compaction decisions, summaries and model-call usage, marked "from history".';

export const stateCommand: Command = {
  name: 'state',
  summary: "show a run's compaction state (threshold, estimate, last compaction and decision)",
  usage: ['state <workflow-id> [--session <id>]'],
  description: `Asks the run (query fh.compactionState). Queries are answered by a worker running the agent: keep \`fh worker\` up.\n${FROM_HISTORY}`,
  connects: true,
  options: QUERY_OPTIONS,
  examples: ['fh state research-42', 'fh state research-42 --session main --json'],
  run: (p, io) =>
    runQuery<CompactionState | null>(
      p,
      io,
      'state',
      AGENT_QUERIES.compactionState,
      (id, s, v) => formatCompactionState(id, v!),
      (id, h) => formatHistoryState(id, h),
      (s) => `run has no session${s ? ` '${s}'` : ' yet'}: the agent has not called init()/session() so far`,
    ),
};

export const budgetCommand: Command = {
  name: 'budget',
  summary: "show a run's context budget: one bar per layer (system, tools, summaries, history, reply)",
  usage: ['budget <workflow-id> [--session <id>] [--width 40]'],
  description: `Asks the run (query fh.contextBudget). Queries are answered by a worker running the agent: keep \`fh worker\` up.\n${FROM_HISTORY}`,
  connects: true,
  options: { ...QUERY_OPTIONS, width: { type: 'string', value: '<n>', help: 'bar width in characters', default: '40' } },
  examples: ['fh budget research-42', 'fh budget research-42 --json'],
  run: (p, io) => {
    const width = int(p, 'width', 40, 5);
    return runQuery<ContextBudget | null>(
      p,
      io,
      'budget',
      AGENT_QUERIES.contextBudget,
      (id, s, v) => formatBudget(id, s, v!, width),
      (id, h) => formatHistoryBudget(id, h, width),
      (s) => `run has no session${s ? ` '${s}'` : ' yet'}, or its model's context window is unknown: nothing to show`,
    );
  },
};

/** How long a run that has ended may take to answer before its history is read instead. */
const ENDED_RUN_QUERY_S = 3;
/** Pollers seen by the server this recently count as a worker that may answer (a poll lasts up to ~60 s). */
const POLLER_FRESH_MS = 90_000;

async function runQuery<T>(
  p: Parsed,
  io: Io,
  command: string,
  query: string,
  render: (workflowId: string, session: string | undefined, value: T) => string,
  renderHistory: (workflowId: string, state: HistoryRunState) => string,
  empty: (session: string | undefined) => string,
): Promise<number> {
  const [workflowId, ...extra] = p.positionals;
  if (!workflowId) throw usage(`fh ${command} needs a workflow id: fh ${command} <workflow-id> (find one with \`fh list\`)`);
  if (extra.length > 0) throw usage(`unexpected argument '${extra[0]}'`);
  const timeoutS = int(p, 'timeout', 10, 1);
  const session = str(p, 'session');
  const conn = await connect(p);
  try {
    const answer = await queryRun<T>(conn, p, workflowId, str(p, 'run-id'), query, session, timeoutS);
    if (answer.from === 'history') {
      if (flag(p, 'json')) printJson(io, answer.state);
      else io.out(renderHistory(workflowId, answer.state));
      return EXIT.OK;
    }
    const value = answer.value;
    if (flag(p, 'json')) {
      printJson(io, value ?? null);
      return EXIT.OK;
    }
    io.out(value === null || value === undefined ? `${workflowId}: ${empty(session)}` : render(workflowId, session, value));
    return EXIT.OK;
  } finally {
    await conn.close();
  }
}

type Answer<T> = { from: 'query'; value: T } | { from: 'history'; state: HistoryRunState };

async function queryRun<T>(
  conn: Connected,
  p: Parsed,
  workflowId: string,
  runId: string | undefined,
  query: string,
  session: string | undefined,
  timeoutS: number,
): Promise<Answer<T>> {
  const ctx = { settings: conn.settings, workflowId };
  const handle = conn.client.workflow.getHandle(workflowId, runId);
  // Describe first: an unknown id is a clear "not found", and the task queue goes in the hint below.
  let taskQueue: string;
  let status: string;
  try {
    const d = await handle.describe();
    taskQueue = d.taskQueue;
    status = d.status.name;
  } catch (err) {
    throw asCliError(err, ctx);
  }
  const ended = status !== 'RUNNING';
  const fromHistory = async (why: string): Promise<Answer<T>> => {
    try {
      const history = (await handle.fetchHistory()) as History;
      return { from: 'history', state: await stateFromHistory(history, { store: storeFrom(p), workflowId, note: why }) };
    } catch (err) {
      throw asCliError(err, ctx);
    }
  };
  // An ended run is answered by a worker replaying it; with none polling, the server would just wait.
  if (ended && !(await hasFreshWorkflowPoller(conn, taskQueue))) {
    return fromHistory(`the run has ended (${status}) and no worker polls task queue '${taskQueue}'`);
  }
  const waitS = ended && str(p, 'timeout') === undefined ? ENDED_RUN_QUERY_S : timeoutS;
  try {
    return { from: 'query', value: await withDeadline(conn.client, waitS * 1000, () => handle.query<T, [string?]>(query, session)) };
  } catch (err) {
    const code = grpcCode(err);
    // Under load the server can answer a query no worker takes with a generic "Failed to query
    // Workflow" before our deadline: with no worker polling, that is the same case as a timeout.
    const unanswered = /failed to query workflow/i.test((err as Error).message ?? '') && !(await hasFreshWorkflowPoller(conn, taskQueue));
    // A worker that stopped a moment ago: the server says it has seen no poller lately, before the deadline.
    if (isNoPollerError(err)) {
      if (ended) return fromHistory(`the run has ended (${status}) and no worker polls task queue '${taskQueue}'`);
      throw failure(`no worker answered: ${noPollerMessage(taskQueue)}`);
    }
    if (code === GRPC.DEADLINE_EXCEEDED || /deadline/i.test((err as Error).message ?? '') || unanswered) {
      if (ended) return fromHistory(`the run has ended (${status}) and no worker answered within ${waitS} s`);
      throw failure(
        `no worker answered within ${waitS} s: queries run on a worker, so start one for task queue '${taskQueue}' with \`fh worker --agents <module> --task-queue ${taskQueue}\` (or raise --timeout)`,
      );
    }
    if ((err as Error).name === 'QueryNotRegisteredError') {
      throw failure(`workflow ${workflowId} is not an agent run (it does not answer ${query}); list agent runs with \`fh list\``);
    }
    // A worker that just stopped can leave the server routing the query to it ("Failed to query
    // Workflow"): for a run that has ended, its history answers as well.
    if (ended) return fromHistory(`the run has ended (${status}) and its query failed: ${oneLine((err as Error).message ?? String(err))}`);
    throw asCliError(err, ctx);
  }
}

/** Whether a worker polled the workflow task queue lately; true when the server will not say (ask anyway). */
async function hasFreshWorkflowPoller(conn: Connected, taskQueue: string): Promise<boolean> {
  try {
    const res = await conn.client.workflowService.describeTaskQueue({
      namespace: conn.settings.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
    });
    const now = Date.now();
    return (res.pollers ?? []).some((poller) => {
      const at = poller.lastAccessTime;
      const ms = at ? Date.parse(isoTime(at) ?? '') : now;
      return Number.isNaN(ms) || now - ms < POLLER_FRESH_MS;
    });
  } catch {
    return true;
  }
}

function withDeadline<T>(client: Client, ms: number, fn: () => Promise<T>): Promise<T> {
  return client.connection.withDeadline(Date.now() + ms, fn);
}
