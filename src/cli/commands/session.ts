/**
 * fh session …: sessions from the terminal. A session is one long-lived workflow of its agent (workflow id =
 * session id) answering prompts for days; these commands start, list, show, prompt, approve, edit, fork and
 * delete them through the SDK's SessionHandle. Typed SDK errors are mapped to exit codes in context.ts.
 */
import type { SessionHandle } from '../../client/sessions';
import { parseDuration } from '../../activities/stores/store-gc';
import { DEFAULT_TASK_QUEUE } from '../../client/start';
import { parseLabelArg } from '../../core/sessions/labels';
import { PERMISSION_MODES, THINKING_LEVELS, type SessionSettingsPatch } from '../../core/sessions/settings';
import { flag, int, str, strs, type Parsed } from '../args';
import type { Command, Io } from '../context';
import { EXIT, usage } from '../errors';
import { approvalText, conversationText, infoText, sessionTable } from '../session-text';
import { noWorkerMessage, workerPolls } from '../waiting';
import { enhanceCommand, shareCommand } from './session-extras';
import { planCommands } from './session-plans';
import { AGENTS_INPUT_OPTION, checkInput, readInput } from './run';
import { archiveCommand, endCommand, interruptCommand, labelCommand, resetCommand, statusCommand, titleCommand } from './session-edits';
import { args, handleOf, NOTE_OPTION, out, sessions, sessionsList, sub, withClient } from '../session-command-kit';
import { messageIdFor, withReattachHint } from '../reattach';
import { plural } from '../../core/plural';
export { idleTaskQueue } from '../session-command-kit';

// ---------------------------------------------------------------------------------------------------------
// fh session new

const newCommand = sub('new', {
  summary: 'start a session of an agent (its worker must serve the task queue)',
  usage:
    'new <agent> [--input <json|@file|->] [--agents <module>] [--id <id>] [--title <title>] [--label name=value]… [--mode explore|ask|execute] [--connection <name>] [--model <m>] [--thinking <level>] [--cwd <dir>] [--task-queue <q>] [--history-limit <n>] [--auto-archive-after 30d]',
  description:
    'Starts a session workflow of <agent> (an agent whose run calls init() and then serve()). It starts as `todo`;\n' +
    'the first message moves it to `in-progress`. Prints the session id (a slug like 261122-amber-forest unless --id).',
  options: {
    input: { type: 'string', short: 'i', value: '<json|@file|->', help: "the agent's input, for an agent that takes one: JSON, @file with JSON, or - for stdin" },
    agents: AGENTS_INPUT_OPTION,
    id: { type: 'string', value: '<id>', help: 'the session id: lowercase letters, digits and -', default: 'a YYMMDD-adjective-noun slug' },
    title: { type: 'string', value: '<title>', help: 'a title (never replaced by a generated one)' },
    label: { type: 'string', multiple: true, value: '<name[=value]>', help: 'a label, e.g. urgent, priority=2, area=billing' },
    mode: { type: 'string', value: '<mode>', help: `permission mode: ${PERMISSION_MODES.join(', ')}` },
    connection: { type: 'string', value: '<name>', help: "the worker's model connection (locked after the first message)", default: "the agent's, else anthropic" },
    model: { type: 'string', value: '<model>', help: 'the model of this session, an id within its connection (changes freely)' },
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
    'fh session new assistant --connection openai --model gpt-5.1',
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
    const input = str(p, 'input') !== undefined ? await readInput(str(p, 'input')) : undefined;
    checkInput(p, named[0]!, input, 'session new');
    return withClient(p, async (conn) => {
      // Whether the workers know the agent can only be told by a worker: without one, say so now.
      if ((await workerPolls(conn.client, conn.settings.namespace, taskQueue)) === false) {
        io.err(`[fh session new] ${noWorkerMessage(taskQueue)}; the session waits for one (and only a worker can tell whether it serves agent '${named[0]}')`);
      }
      const s = await sessions().startSession(conn.client, named[0]!, {
        ...(input !== undefined ? { input } : {}),
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
  const connection = str(p, 'connection');
  if (connection !== undefined) patch.connection = connection;
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
      // A session still loading its conversation answers no usage yet: the cost row waits for it.
      const usage = await s.usage().catch(() => null);
      if (flag(p, 'json')) return out(io, p, flag(p, 'messages') ? { info, usage, messages } : { info, usage, messageCount: messages.length }, '');
      return out(io, p, null, [infoText(info, usage), '', conversationText(messages, flag(p, 'messages'))].join('\n'));
    }, true, { needsWorkerFor: named[0]! });
  },
});

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
    const messageId = messageIdFor(str(p, 'message-id'));
    const agent = str(p, 'start');
    if (agent !== undefined && flag(p, 'no-wait')) throw usage('--start and --no-wait do not go together (fh session prompt)');
    const waitTimeout = str(p, 'timeout') !== undefined;
    return withClient(
      p,
      async (conn) => {
        if (agent !== undefined) {
          const started = await sessions()
            .sendPrompt(conn.client, agent, text, { id: named[0]!, taskQueue: str(p, 'task-queue') ?? DEFAULT_TASK_QUEUE, messageId })
            .catch((err: unknown) => Promise.reject(withReattachHint(err, named[0]!, messageId, conn.settings)));
          return out(io, p, { id: started.session.id, reply: started.reply }, started.reply);
        }
        const s = handleOf(conn, named[0]!);
        if (flag(p, 'no-wait')) {
          const sent = await s.send(text, { messageId });
          return out(io, p, { id: s.id, ...sent }, sent.messageId);
        }
        const note = approvalNote(s, io);
        try {
          const reply = await s.prompt(text, { messageId }).catch((err: unknown) => Promise.reject(withReattachHint(err, s.id, messageId, conn.settings)));
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
        const removed = r.garbage ? `; removed ${plural(r.garbage.removed.length, 'store blob', 'store blobs')}` : '';
        return out(io, p, { id, runs: r.runs, ...(r.garbage ? { removedBlobs: r.garbage.removed.length, removedBytes: r.garbage.removedBytes } : {}) }, `deleted ${id} (${plural(r.runs, 'run', 'runs')})${removed}`);
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
  ...planCommands,
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
  summary: 'long-lived conversations: new, list, show, prompt, approve, deny, plans, approve-plan, decline-plan, interrupt, reset, status, label, title, fork, archive, delete',
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
