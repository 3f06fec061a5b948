/**
 * fh session …: sessions from the terminal. A session is one long-lived workflow of its agent (workflow id =
 * session id) answering prompts for days; these commands start, list, show, prompt, approve, edit, fork and
 * delete them through the SDK's SessionHandle. Typed SDK errors are mapped to exit codes in context.ts.
 */
import type { PendingApproval, SessionInfo } from '../../wire/session-messages';
import type { SessionSummary } from '../../client/sessions-list';
import type { SessionHandle } from '../../client/sessions';
import type { Entry } from '../../core/entries';
import { parseDuration } from '../../edge/store-gc';
import { DEFAULT_TASK_QUEUE } from '../../client/start';
import { parseLabelArg } from '../../core/sessions/labels';
import { PERMISSION_MODES, THINKING_LEVELS, type SessionSettingsPatch } from '../../core/sessions/settings';
import { flag, int, JSON_OPTION, str, strs, type Options, type Parsed } from '../args';
import { asCliError, connect, printJson, STORE_OPTION, type Command, type Connected, type Io } from '../context';
import { CliError, EXIT, failure, GRPC, grpcCode, usage } from '../errors';
import { formatTime, table } from '../render';
import { noWorkerMessage, workerPolls } from '../waiting';
import { enhanceCommand, shareCommand } from './session-extras';

/* eslint-disable @typescript-eslint/no-require-imports */
// The client modules load @temporalio/client: only when a command runs (help stays instant).
const sessions = () => require('../../client/sessions') as typeof import('../../client/sessions');
const sessionsList = () => require('../../client/sessions-list') as typeof import('../../client/sessions-list');
/* eslint-enable @typescript-eslint/no-require-imports */

const TIMEOUT_OPTION: Options = {
  timeout: { type: 'string', value: '<seconds>', help: 'how long to wait for the session (a worker) to answer', default: '30' },
};
const COMMON: Options = { ...TIMEOUT_OPTION, ...JSON_OPTION, ...STORE_OPTION };
const NOTE_OPTION: Options = { note: { type: 'string', value: '<text>', help: 'a note for the model with the decision' } };

/** `fh session <sub>` as a Command: name, usage with the `session` prefix, and the shared connection options. */
function sub(
  name: string,
  spec: { summary: string; usage: string; description?: string; options?: Options; examples: string[]; run: (p: Parsed, io: Io) => Promise<number> },
): Command {
  return {
    name: `session ${name}`,
    summary: spec.summary,
    usage: [`session ${spec.usage}`],
    ...(spec.description ? { description: spec.description } : {}),
    options: { ...spec.options, ...COMMON },
    connects: true,
    examples: spec.examples,
    run: spec.run,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Shared plumbing

/** Positionals after the subcommand: `need` required ones (named for the message), the rest as `rest`. */
function args(p: Parsed, command: string, names: string[], opts: { rest?: string; restRequired?: boolean } = {}): { named: string[]; rest: string[] } {
  const named = p.positionals.slice(0, names.length);
  if (named.length < names.length) {
    throw usage(`fh ${command} needs ${names.slice(named.length).map((n) => `<${n}>`).join(' ')}: fh ${command} ${names.map((n) => `<${n}>`).join(' ')}${opts.rest ? ` <${opts.rest}…>` : ''}`);
  }
  const rest = p.positionals.slice(names.length);
  if (!opts.rest && rest.length > 0) throw usage(`unexpected argument '${rest[0]}' (fh ${command})`);
  if (opts.rest && opts.restRequired && rest.length === 0) throw usage(`fh ${command} needs <${opts.rest}>: fh ${command} ${names.map((n) => `<${n}>`).join(' ')} <${opts.rest}…>`);
  return { named, rest };
}

function timeoutMs(p: Parsed): number {
  return int(p, 'timeout', 30, 1) * 1000;
}

/**
 * Runs `fn` with a connection, bounded by --timeout: a session only answers through a worker, so a call
 * nobody answers ends with what to do instead of hanging. Errors become one line with their exit code.
 */
async function withClient(
  p: Parsed,
  fn: (conn: Connected) => Promise<number>,
  bounded = true,
  opts: { needsWorkerFor?: string } = {},
): Promise<number> {
  const conn = await connect(p);
  const ms = timeoutMs(p);
  try {
    // A call a worker must answer, on a running session nobody polls for: say so now, not after --timeout.
    if (opts.needsWorkerFor) {
      const idle = await idleTaskQueue(conn, opts.needsWorkerFor);
      if (idle) throw failure(`session ${opts.needsWorkerFor} is running, but ${noWorkerMessage(idle)}`);
    }
    return await (bounded ? conn.client.connection.withDeadline(Date.now() + ms, () => fn(conn)) : fn(conn));
  } catch (err) {
    if (err instanceof CliError) throw err;
    const unanswered = grpcCode(err) === GRPC.DEADLINE_EXCEEDED || /deadline exceeded|failed to query workflow/i.test((err as Error)?.message ?? '');
    if (unanswered) {
      const idle = p.positionals[0] ? await idleTaskQueue(conn, p.positionals[0]).catch(() => undefined) : undefined;
      if (idle) throw failure(`no answer: ${noWorkerMessage(idle)}`);
      throw failure(
        `no answer within ${ms / 1000} s: sessions answer through a worker, so start one for the session's task queue with \`fh worker --agents <module>\` (or raise --timeout)`,
      );
    }
    throw asCliError(err, { settings: conn.settings });
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** The task queue of a running session (workflow) that no worker polls; undefined otherwise or when unknown. */
export async function idleTaskQueue(conn: Connected, id: string): Promise<string | undefined> {
  const described = await conn.client.workflow
    .getHandle(id)
    .describe()
    .catch(() => undefined);
  if (!described || described.status.name !== 'RUNNING') return undefined;
  return (await workerPolls(conn.client, conn.settings.namespace, described.taskQueue)) === false ? described.taskQueue : undefined;
}

function handleOf(conn: Connected, id: string): SessionHandle {
  return sessions().getSession(conn.client, id);
}

function out(io: Io, p: Parsed, json: unknown, text: string): number {
  if (flag(p, 'json')) printJson(io, json);
  else io.out(text);
  return EXIT.OK;
}

function labelsText(labels: Record<string, unknown>): string {
  const parts = Object.entries(labels).map(([n, v]) => (v === null || v === undefined ? n : `${n}=${String(v)}`));
  return parts.length ? parts.join(', ') : '-';
}

function oneLineText(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'undefined';
  } catch {
    return String(value);
  }
}

// ---------------------------------------------------------------------------------------------------------
// fh session new

const newCommand = sub('new', {
  summary: 'start a session of an agent (its worker must serve the task queue)',
  usage:
    'new <agent> [--id <id>] [--title <title>] [--label name=value]… [--mode explore|ask|execute] [--model <m>] [--thinking <level>] [--cwd <dir>] [--task-queue <q>] [--history-limit <n>] [--auto-archive-after 30d]',
  description:
    'Starts a session workflow of <agent> (an agent whose run calls init() and then serve()). It starts as `todo`;\n' +
    'the first message moves it to `in-progress`. Prints the session id (a slug like 261122-amber-forest unless --id).',
  options: {
    id: { type: 'string', value: '<id>', help: 'the session id: lowercase letters, digits and -', default: 'a YYMMDD-adjective-noun slug' },
    title: { type: 'string', value: '<title>', help: 'a title (never replaced by a generated one)' },
    label: { type: 'string', multiple: true, value: '<name[=value]>', help: 'a label, e.g. urgent, priority=2, area=billing' },
    mode: { type: 'string', value: '<mode>', help: `permission mode: ${PERMISSION_MODES.join(', ')}` },
    model: { type: 'string', value: '<model>', help: 'the model of this session' },
    thinking: { type: 'string', value: '<level>', help: `thinking level: ${THINKING_LEVELS.join(', ')}` },
    cwd: { type: 'string', value: '<dir>', help: 'working directory of the tools (on the worker)' },
    'task-queue': { type: 'string', short: 'q', value: '<name>', help: 'task queue of the worker', default: DEFAULT_TASK_QUEUE },
    'history-limit': { type: 'string', value: '<n>', help: 'continue as new past this many history events (at least 20)' },
    'auto-archive-after': { type: 'string', value: '<duration>', help: 'archive after this long without a message (90s, 30m, 12h, 30d)' },
  },
  examples: [
    'fh session new assistant',
    'fh session new assistant --title "Billing cleanup" --label area=billing --label priority=2 --mode ask',
    'fh session new assistant --id triage-7 --cwd /srv/repo --auto-archive-after 30d --json',
  ],
  run: async (p, io) => {
    const { named } = args(p, 'session new', ['agent']);
    const settings = settingsFrom(p);
    const labels: Record<string, string | number | boolean | null> = {};
    for (const arg of strs(p, 'label')) {
      const l = parseLabelArg(arg);
      labels[l.name] = l.value;
    }
    const historyLimit = str(p, 'history-limit') !== undefined ? int(p, 'history-limit', 0, 20) : undefined;
    const archiveText = str(p, 'auto-archive-after');
    const autoArchiveAfterMs = archiveText === undefined ? undefined : parseDuration(archiveText);
    if (archiveText !== undefined && !autoArchiveAfterMs) throw usage(`--auto-archive-after must be a duration like 90s, 30m, 12h or 30d; got '${archiveText}'`);
    const taskQueue = str(p, 'task-queue') ?? DEFAULT_TASK_QUEUE;
    return withClient(p, async (conn) => {
      // Whether the workers know the agent can only be told by a worker: without one, say so now.
      if ((await workerPolls(conn.client, conn.settings.namespace, taskQueue)) === false) {
        io.err(`[fh session new] ${noWorkerMessage(taskQueue)}; the session waits for one (and only a worker can tell whether it serves agent '${named[0]}')`);
      }
      const s = await sessions().startSession(conn.client, named[0]!, {
        ...(str(p, 'id') !== undefined ? { id: str(p, 'id') } : {}),
        ...(str(p, 'title') !== undefined ? { title: str(p, 'title') } : {}),
        ...(Object.keys(settings).length ? { settings } : {}),
        ...(Object.keys(labels).length ? { labels } : {}),
        ...(historyLimit !== undefined ? { historyLimit } : {}),
        ...(autoArchiveAfterMs !== undefined ? { autoArchiveAfterMs } : {}),
        taskQueue,
      });
      return out(io, p, { id: s.id, agent: named[0], taskQueue, ...(str(p, 'title') !== undefined ? { title: str(p, 'title') } : {}), labels, settings }, s.id);
    });
  },
});

/** The settings flags of `new` (and of chat's /mode): validated by the SDK, which names the field. */
function settingsFrom(p: Parsed): SessionSettingsPatch {
  const patch: Record<string, string> = {};
  const mode = str(p, 'mode');
  if (mode !== undefined) patch.permissionMode = mode;
  const model = str(p, 'model');
  if (model !== undefined) patch.model = model;
  const thinking = str(p, 'thinking');
  if (thinking !== undefined) patch.thinking = thinking;
  const cwd = str(p, 'cwd');
  if (cwd !== undefined) patch.workingDirectory = cwd;
  return patch as SessionSettingsPatch;
}

// ---------------------------------------------------------------------------------------------------------
// fh session list

const listCommand = sub('list', {
  summary: 'list sessions: id, title, status, labels, last message',
  usage: 'list [--status <s>]… [--label <name[=value]>]… [--flagged] [--archived | --all] [--agent <a>] [--title <words>] [--limit 50]',
  description: 'Reads Temporal visibility only (no worker needed). Newest message first; archived sessions are hidden unless --archived or --all.',
  options: {
    status: { type: 'string', short: 's', multiple: true, value: '<status>', help: 'only sessions in this status (any of several)' },
    label: { type: 'string', short: 'l', multiple: true, value: '<name[=value]>', help: 'only sessions with this label (all of several)' },
    flagged: { type: 'boolean', help: 'only flagged (pinned) sessions' },
    archived: { type: 'boolean', help: 'only archived sessions' },
    all: { type: 'boolean', help: 'archived and unarchived sessions' },
    agent: { type: 'string', short: 'a', value: '<name>', help: 'only sessions of this agent' },
    title: { type: 'string', value: '<words>', help: 'only sessions whose title has all these words' },
    limit: { type: 'string', value: '<n>', help: 'at most this many sessions', default: '50' },
  },
  examples: ['fh session list', 'fh session list --status in-progress --status needs-review --label area=billing', 'fh session list --all --json'],
  run: async (p, io) => {
    args(p, 'session list', []);
    if (flag(p, 'archived') && flag(p, 'all')) throw usage('--archived and --all exclude each other (fh session list)');
    const limit = int(p, 'limit', 50, 1);
    return withClient(p, async (conn) => {
      const statuses = strs(p, 'status');
      const found = await sessionsList().listSessions(conn.client, {
        ...(statuses.length ? { status: statuses } : {}),
        ...(strs(p, 'label').length ? { labels: strs(p, 'label') } : {}),
        ...(flag(p, 'flagged') ? { flagged: true } : {}),
        ...(flag(p, 'archived') ? { archived: true } : {}),
        ...(flag(p, 'all') ? { includeArchived: true } : {}),
        ...(str(p, 'agent') !== undefined ? { agent: str(p, 'agent') } : {}),
        ...(str(p, 'title') !== undefined ? { titleContains: str(p, 'title') } : {}),
        limit,
      });
      if (flag(p, 'json')) return out(io, p, found, '');
      if (found.length === 0) return out(io, p, [], `No sessions found${p.values.status || p.values.label || p.values.agent ? ' for that filter' : ''} in namespace ${conn.settings.namespace}. Start one with \`fh session new <agent>\`.`);
      return out(io, p, found, sessionTable(found));
    });
  },
});

function sessionTable(rows: SessionSummary[]): string {
  return table(
    ['ID', 'TITLE', 'STATUS', 'LABELS', 'LAST MESSAGE (UTC)'],
    rows.map((s) => [
      `${s.flagged ? '★ ' : ''}${s.id}`,
      oneLineText(s.title ?? '-', 40),
      `${s.status || '-'}${s.archived ? ' (archived)' : ''}${s.running ? '' : ' (ended)'}`,
      oneLineText(labelsText(s.labels), 40),
      formatTime(s.lastMessageAt),
    ]),
  );
}

// ---------------------------------------------------------------------------------------------------------
// fh session show

const showCommand = sub('show', {
  summary: "show a session: its catalogue entry, settings, queue, pending approvals and the conversation",
  usage: 'show <id> [--messages] [--json]',
  description: 'The conversation is one line per message, numbered (the numbers `fork --at` takes); --messages prints every message in full (and adds them to --json).',
  options: { messages: { type: 'boolean', help: 'print the messages in full (with --json: include them)' } },
  examples: ['fh session show 261122-amber-forest', 'fh session show triage-7 --messages', 'fh session show triage-7 --json --messages'],
  run: async (p, io) => {
    const { named } = args(p, 'session show', ['id']);
    return withClient(p, async (conn) => {
      const s = handleOf(conn, named[0]!);
      const info = await s.info();
      const messages = await s.messages();
      if (flag(p, 'json')) return out(io, p, flag(p, 'messages') ? { info, messages } : { info, messageCount: messages.length }, '');
      return out(io, p, null, [infoText(info), '', conversationText(messages, flag(p, 'messages'))].join('\n'));
    }, true, { needsWorkerFor: named[0]! });
  },
});

function infoText(i: SessionInfo): string {
  const rows: Array<[string, string]> = [
    ['id', `${i.id}${i.flagged ? ' ★ flagged' : ''}${i.archived ? ' (archived)' : ''}${i.closed ? ' (ended)' : ''}`],
    ['title', i.title ? `${i.title}${i.titleSource === 'generated' ? ' (generated)' : ''}` : '-'],
    ['agent', i.agent],
    ['status', `${i.status}${i.statusManual ? ' (set by hand: no automatic transitions)' : ''}`],
    ['labels', labelsText(i.labels)],
    [
      'settings',
      `mode ${i.settings.permissionMode}, model ${i.settings.model ?? '(agent default)'}, thinking ${i.settings.thinking}, connection ${i.settings.connection}${i.settings.workingDirectory ? `, cwd ${i.settings.workingDirectory}` : ''}`,
    ],
    ['messages', `${i.messageCount} from the user; last ${formatTime(i.lastMessageAt === undefined ? undefined : new Date(i.lastMessageAt))}; created ${formatTime(new Date(i.createdAt))}`],
    ['turn', i.processing ? `running${i.current ? ` (message ${i.current})` : ''}` : 'idle'],
  ];
  if (i.queued.length) rows.push(['queued', i.queued.map((m) => `${m.id}: ${oneLineText(m.text, 50)}`).join('; ')]);
  if (i.pendingApprovals.length) rows.push(['approvals', i.pendingApprovals.map(approvalText).join('; ')]);
  if (i.forkedFrom) rows.push(['forked from', `${i.forkedFrom.sessionId} at message ${i.forkedFrom.atMessage}`]);
  if (i.continuedRuns) rows.push(['runs', `${i.continuedRuns + 1} (continued as new ${i.continuedRuns}×), history ${i.historyLength} events`]);
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

function approvalText(a: PendingApproval): string {
  return `${a.callId} ${a.tool} ${oneLineText(json(a.input), 80)}`;
}

/** The conversation, one numbered line per message (full text with `full`). */
export function conversationText(messages: Entry[], full: boolean): string {
  if (messages.length === 0) return '(no messages yet)';
  const width = String(messages.length - 1).length;
  const clip = (t: string, n: number) => (full ? t : oneLineText(t, n));
  return messages
    .map((m, i) => {
      const n = `#${String(i).padStart(width)}`;
      switch (m.type) {
        case 'user':
          return `${n} user       ${clip(m.text, 100)}`;
        case 'assistant': {
          const parts = m.content.map((b) =>
            b.type === 'text' ? clip(b.text, 100) : b.type === 'tool_use' ? `→ ${b.name} ${clip(json(b.input), 80)}` : `(${b.type === 'thinking' ? 'thinking' : 'redacted thinking'})`,
          );
          return `${n} assistant  ${parts.join(full ? '\n' : ' ')}`;
        }
        case 'tool_results':
          return `${n} tools      ${m.results.map((r) => `${r.is_error ? '✗ ' : ''}${clip(r.content, 80)}`).join(full ? '\n' : ' | ')}`;
        case 'summary':
          return `${n} summary    ${clip(m.summary, 100)} (${m.compactedEntries} earlier messages)`;
        default:
          return `${n} ${(m as { type: string }).type}`;
      }
    })
    .join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// fh session prompt

const promptCommand = sub('prompt', {
  summary: 'send a message to a session and print the reply',
  usage: 'prompt <id> <text…> [--no-wait] [--start <agent>] [--message-id <id>]',
  description:
    'Queues the message behind any running turn and waits for its reply. --no-wait returns at once with the message id.\n' +
    '--start <agent> starts the session first when it does not exist (one round trip: update-with-start).\n' +
    'A turn that waits for an approval waits for `fh session approve` (a note on stderr says so).',
  options: {
    'no-wait': { type: 'boolean', help: 'queue the message and print its id; do not wait for the reply' },
    start: { type: 'string', value: '<agent>', help: 'start the session (as this agent) if it does not exist' },
    'task-queue': { type: 'string', short: 'q', value: '<name>', help: 'task queue of the worker (with --start)', default: DEFAULT_TASK_QUEUE },
    'message-id': { type: 'string', value: '<id>', help: 'names the message: sending the same id again queues it once' },
  },
  examples: ["fh session prompt triage-7 'What changed since yesterday?'", 'fh session prompt triage-7 run the tests --no-wait', "fh session prompt daily-notes --start assistant 'Start my notes'"],
  run: async (p, io) => {
    const { named, rest } = args(p, 'session prompt', ['id'], { rest: 'text', restRequired: true });
    const text = rest.join(' ');
    if (!text.trim()) throw usage('the message is empty (fh session prompt <id> <text…>)');
    const messageId = str(p, 'message-id');
    const agent = str(p, 'start');
    if (agent !== undefined && flag(p, 'no-wait')) throw usage('--start and --no-wait do not go together (fh session prompt)');
    const waitTimeout = str(p, 'timeout') !== undefined;
    return withClient(
      p,
      async (conn) => {
        if (agent !== undefined) {
          const { session, reply } = await sessions().sendPrompt(conn.client, agent, text, {
            id: named[0]!,
            taskQueue: str(p, 'task-queue') ?? DEFAULT_TASK_QUEUE,
            ...(messageId !== undefined ? { messageId } : {}),
          });
          return out(io, p, { id: session.id, reply }, reply);
        }
        const s = handleOf(conn, named[0]!);
        if (flag(p, 'no-wait')) {
          const sent = await s.send(text, messageId !== undefined ? { messageId } : {});
          return out(io, p, { id: s.id, ...sent }, sent.messageId);
        }
        const note = approvalNote(s, io);
        try {
          const reply = await s.prompt(text, messageId !== undefined ? { messageId } : {});
          return out(io, p, { id: s.id, reply }, reply);
        } finally {
          note.stop();
        }
      },
      // A reply may take long: only an explicit --timeout bounds it.
      waitTimeout,
    );
  },
});

/** While a prompt waits, says on stderr (once per call) that the turn waits for an approval, and how to give it. */
function approvalNote(s: SessionHandle, io: Io): { stop(): void } {
  const told = new Set<string>();
  const timer = setInterval(() => {
    s.pendingApprovals().then(
      (pending) => {
        for (const a of pending) {
          if (told.has(a.callId)) continue;
          told.add(a.callId);
          io.err(`[fh session] waiting for approval: ${approvalText(a)}; run \`fh session approve ${s.id} ${a.callId}\` or \`fh session deny ${s.id} ${a.callId}\``);
        }
      },
      () => undefined,
    );
  }, 2000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

// ---------------------------------------------------------------------------------------------------------
// fh session approve / deny

function decisionCommand(approved: boolean): Command {
  const verb = approved ? 'approve' : 'deny';
  return sub(verb, {
    summary: `${verb} a tool call that waits for approval (permission mode ask)`,
    usage: `${verb} <id> [<callId>] [--note <text>]`,
    description: `Without <callId>: the one pending approval; with several pending it lists them and exits 2.${approved ? '' : ' The model is told the call was denied (and the note).'}`,
    options: NOTE_OPTION,
    examples: [`fh session ${verb} triage-7`, `fh session ${verb} triage-7 toolu_01AbC --note '${approved ? 'ok, just this once' : 'write to /tmp instead'}'`],
    run: async (p, io) => {
      const { named, rest } = args(p, `session ${verb}`, ['id'], { rest: 'callId' });
      if (rest.length > 1) throw usage(`unexpected argument '${rest[1]}' (fh session ${verb} <id> [<callId>])`);
      const note = str(p, 'note');
      return withClient(p, async (conn) => {
        const s = handleOf(conn, named[0]!);
        let callId = rest[0];
        let tool: string | undefined;
        if (callId === undefined) {
          const pending = await s.pendingApprovals();
          if (pending.length !== 1) {
            if (pending.length > 1) io.err(pending.map((a) => `  ${approvalText(a)}`).join('\n'));
            throw usage(
              pending.length === 0
                ? `session ${s.id} has no tool call waiting for approval`
                : `session ${s.id} has ${pending.length} tool calls waiting for approval (listed above): name one, fh session ${verb} ${s.id} <callId>`,
            );
          }
          callId = pending[0]!.callId;
          tool = pending[0]!.tool;
        }
        if (approved) await s.approve(callId, note);
        else await s.deny(callId, note);
        return out(io, p, { id: s.id, callId, approved, ...(tool ? { tool } : {}), ...(note !== undefined ? { note } : {}) }, `${approved ? 'approved' : 'denied'} ${callId}${tool ? ` (${tool})` : ''}`);
      }, true, { needsWorkerFor: named[0]! });
    },
  });
}

// ---------------------------------------------------------------------------------------------------------
// Small edits: interrupt, status, title, label, archive, unarchive, end

const interruptCommand = sub('interrupt', {
  summary: "cancel a session's running turn (model call, tools, approval wait)",
  usage: 'interrupt <id>',
  examples: ['fh session interrupt triage-7'],
  run: async (p, io) => {
    const { named } = args(p, 'session interrupt', ['id']);
    return withClient(p, async (conn) => {
      const r = await handleOf(conn, named[0]!).interrupt();
      return out(io, p, { id: named[0], ...r }, r.interrupted ? `interrupted the turn answering ${r.messageId ?? 'the current message'}` : 'nothing to interrupt: no turn is running');
    });
  },
});

// Same session id, same workflow: the overflow ladder resets mid-turn inside the workflow the same way,
// and clients (a chat window, `fh session prompt`) keep addressing the session they know.
const resetCommand = sub('reset', {
  summary: "restart a session's conversation from a transfer summary and the agent's memory (same id; the old transcript stays stored)",
  usage: 'reset <id> [--no-summary]',
  options: { 'no-summary': { type: 'boolean', help: 'start empty (memory only), without the transfer summary call' } },
  examples: ['fh session reset triage-7'],
  run: async (p, io) => {
    const { named } = args(p, 'session reset', ['id']);
    return withClient(p, async (conn) => {
      const r = await handleOf(conn, named[0]!).reset({ transferSummary: !flag(p, 'no-summary') });
      return out(io, p, { id: named[0], ...r }, `reset ${named[0]}: ${r.entriesBefore} entries replaced by a transfer summary${r.summary ? `:\n${r.summary}` : ' (none)'}`);
    });
  },
});

const statusCommand = sub('status', {
  summary: "set a session's status (todo, in-progress, needs-review, done, cancelled, or the agent's own)",
  usage: 'status <id> <status>',
  description: 'A status set by hand stops the automatic transitions; done and cancelled are never reopened automatically.',
  examples: ['fh session status triage-7 done', 'fh session status triage-7 blocked --json'],
  run: async (p, io) => {
    const { named } = args(p, 'session status', ['id', 'status']);
    return edited(p, io, named[0]!, (s) => s.setStatus(named[1]!), (i) => `${i.id}: status ${i.status}`);
  },
});

const titleCommand = sub('title', {
  summary: 'rename a session',
  usage: 'title <id> <title…>',
  examples: ['fh session title triage-7 Billing export bug'],
  run: async (p, io) => {
    const { named, rest } = args(p, 'session title', ['id'], { rest: 'title', restRequired: true });
    return edited(p, io, named[0]!, (s) => s.setTitle(rest.join(' ')), (i) => `${i.id}: title ${i.title ?? '-'}`);
  },
});

const labelCommand = sub('label', {
  summary: 'add, change or remove labels of a session',
  usage: 'label <id> [name[=value]…] [--remove <name>]…',
  description: 'Values are typed as written: priority=2 is a number, done=true a boolean, area=billing a string; a bare name is a label without a value.',
  options: { remove: { type: 'string', multiple: true, value: '<name>', help: 'remove this label' } },
  examples: ['fh session label triage-7 urgent priority=2', 'fh session label triage-7 --remove urgent'],
  run: async (p, io) => {
    const { named, rest } = args(p, 'session label', ['id'], { rest: 'name[=value]' });
    const adds = rest.map(parseLabelArg);
    const removes = strs(p, 'remove');
    if (adds.length === 0 && removes.length === 0) throw usage('fh session label needs a label to set (name or name=value) or --remove <name>');
    return edited(
      p,
      io,
      named[0]!,
      async (s) => {
        let info: SessionInfo | undefined;
        for (const l of adds) info = await s.label(l.name, l.value);
        for (const name of removes) info = await s.unlabel(name);
        return info!;
      },
      (i) => `${i.id}: labels ${labelsText(i.labels)}`,
    );
  },
});

function archiveCommand(archived: boolean): Command {
  const verb = archived ? 'archive' : 'unarchive';
  return sub(verb, {
    summary: archived ? 'archive a session (hidden from `fh session list` unless --archived/--all)' : 'bring an archived session back',
    usage: `${verb} <id>`,
    examples: [`fh session ${verb} triage-7`],
    run: async (p, io) => {
      const { named } = args(p, `session ${verb}`, ['id']);
      return edited(p, io, named[0]!, (s) => (archived ? s.archive() : s.unarchive()), (i) => `${i.id}: ${i.archived ? 'archived' : 'not archived'}`);
    },
  });
}

const endCommand = sub('end', {
  summary: 'end a session: queued messages are answered SESSION_CLOSED and its workflow completes',
  usage: 'end <id>',
  examples: ['fh session end triage-7'],
  run: async (p, io) => {
    const { named } = args(p, 'session end', ['id']);
    return withClient(p, async (conn) => {
      await handleOf(conn, named[0]!).end();
      return out(io, p, { id: named[0], ended: true }, `${named[0]}: ended`);
    });
  },
});

async function edited(p: Parsed, io: Io, id: string, edit: (s: SessionHandle) => Promise<SessionInfo>, text: (i: SessionInfo) => string): Promise<number> {
  return withClient(p, async (conn) => {
    const info = await edit(handleOf(conn, id));
    return out(io, p, info, text(info));
  });
}

// ---------------------------------------------------------------------------------------------------------
// fh session fork / delete

const forkCommand = sub('fork', {
  summary: 'start a new session with the conversation of this one up to a message (shared by reference)',
  usage: 'fork <id> --at <n> [--id <new-id>] [--title <title>] [--task-queue <q>]',
  description: '<n> is the number of the last message the fork keeps, as `fh session show` numbers them. The original is untouched.',
  options: {
    at: { type: 'string', value: '<n>', help: 'the last message the fork keeps (required)' },
    id: { type: 'string', value: '<id>', help: 'the id of the fork', default: 'a fresh slug' },
    title: { type: 'string', value: '<title>', help: 'the title of the fork' },
    'task-queue': { type: 'string', short: 'q', value: '<name>', help: 'task queue of the fork', default: "the original's" },
  },
  examples: ['fh session fork triage-7 --at 3', 'fh session fork triage-7 --at 5 --id triage-7-alt --title "Other approach"'],
  run: async (p, io) => {
    const { named } = args(p, 'session fork', ['id']);
    if (str(p, 'at') === undefined) throw usage('fh session fork needs --at <n>: the number of the last message the fork keeps (see `fh session show`)');
    const at = int(p, 'at', 0, 0);
    return withClient(p, async (conn) => {
      const fork = await handleOf(conn, named[0]!).fork({
        atMessage: at,
        ...(str(p, 'id') !== undefined ? { id: str(p, 'id') } : {}),
        ...(str(p, 'title') !== undefined ? { title: str(p, 'title') } : {}),
        ...(str(p, 'task-queue') !== undefined ? { taskQueue: str(p, 'task-queue') } : {}),
      });
      return out(io, p, { id: fork.id, forkedFrom: { sessionId: named[0], atMessage: at } }, fork.id);
    });
  },
});

const deleteCommand = sub('delete', {
  summary: 'delete a session: every run of its workflow (and with --store-dir, its unshared store blobs)',
  usage: 'delete <id> [--yes] [--store-dir <dir>]',
  description:
    'Asks for confirmation on a terminal; without one (a script, a pipe) --yes is required. With --store-dir given\n' +
    'explicitly, the store blobs nothing else references are removed too (a fork keeps the prefix it shares).',
  options: { yes: { type: 'boolean', short: 'y', help: 'do not ask for confirmation' } },
  examples: ['fh session delete triage-7', 'fh session delete triage-7 --yes --store-dir /var/lib/fh/store'],
  run: async (p, io) => {
    const { named } = args(p, 'session delete', ['id']);
    const id = named[0]!;
    if (!flag(p, 'yes')) {
      if (!process.stdin.isTTY) throw usage(`fh session delete asks for confirmation, and stdin is not a terminal: pass --yes to delete ${id}`);
      if (!(await confirm(`Delete session ${id} and all its runs? This cannot be undone. [y/N] `))) {
        io.err('[fh session] not deleted');
        return EXIT.FAILURE;
      }
    }
    const storeDir = str(p, 'store-dir');
    return withClient(
      p,
      async (conn) => {
        const r = await handleOf(conn, id).delete(storeDir !== undefined ? { store: { dir: storeDir } } : {});
        const removed = r.garbage ? `; removed ${r.garbage.removed.length} store blob(s)` : '';
        return out(io, p, { id, runs: r.runs, ...(r.garbage ? { removedBlobs: r.garbage.removed.length, removedBytes: r.garbage.removedBytes } : {}) }, `deleted ${id} (${r.runs} run${r.runs === 1 ? '' : 's'})${removed}`);
      },
      // Deletion waits for the server's background task (up to 2 minutes): not bounded by --timeout's default.
      str(p, 'timeout') !== undefined,
    );
  },
});

async function confirm(question: string): Promise<boolean> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const readline = require('node:readline') as typeof import('node:readline');
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.question(question, resolve);
      rl.on('close', () => resolve(''));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

// ---------------------------------------------------------------------------------------------------------

const SUBCOMMANDS: Command[] = [
  newCommand,
  listCommand,
  showCommand,
  promptCommand,
  decisionCommand(true),
  decisionCommand(false),
  interruptCommand,
  resetCommand,
  statusCommand,
  titleCommand,
  labelCommand,
  forkCommand,
  archiveCommand(true),
  archiveCommand(false),
  endCommand,
  deleteCommand,
  enhanceCommand,
  shareCommand,
];

export const sessionCommand: Command = {
  name: 'session',
  summary: 'long-lived conversations: new, list, show, prompt, approve, deny, interrupt, reset, status, label, title, fork, archive, delete',
  // Every subcommand's usage line: `fh session --help` shows the whole syntax at a glance.
  usage: SUBCOMMANDS.map((c) => c.usage[0]!),
  description:
    "A session is one workflow of its agent (the agent's run calls init() then serve()), answering prompts for days;\n" +
    'its id is the workflow id. Interactive: `fh chat <id>`.',
  options: {},
  connects: false,
  examples: ['fh session new assistant --mode ask', 'fh session list --status needs-review', "fh session prompt 261122-amber-forest 'Summarise the diff'", 'fh chat 261122-amber-forest'],
  subcommands: Object.fromEntries(SUBCOMMANDS.map((c) => [c.name.slice('session '.length), c])),
  run: async () => {
    throw usage(`say which: fh session <command>, one of ${SUBCOMMANDS.map((c) => c.name.slice('session '.length)).join(', ')} (fh session --help)`);
  },
};
