/**
 * fh chat: an interactive terminal chat on a session. Each line is queued with `send` and its reply awaited;
 * the session's stream (SessionHandle.stream) shows the model's text as it is generated, tool calls, results
 * and approval requests as they happen, without polling. Approvals are answered in the prompt.
 */
import type { SessionHandle } from '../../client/sessions';
import { DEFAULT_TASK_QUEUE } from '../../client/start';
import { PERMISSION_MODES } from '../../core/sessions/settings';
import { int, str, strs, type Parsed } from '../args';
import { asCliError, connect, LIVE_BROKER_OPTION, liveBrokerClient, liveBrokerUrl, STORE_OPTION, warnIfBrokerDown, type Command, type Io } from '../context';
import { failure, oneLine, usage } from '../errors';
import { AGENTS_INPUT_OPTION, checkInput, readInput } from './run';
import { idleTaskQueue } from './session';
import { Chat } from '../chat/terminal-chat';
import { isUnansweredRead, noWorkerMessage } from '../waiting';

export const chatCommand: Command = {
  name: 'chat',
  summary: 'chat with a session in the terminal: tool calls, approvals, interrupts, settings',
  usage: ['chat <session-id> [--live-broker <redis-url>]', 'chat --new <agent> [--input <json|@file>] [--agents <module>] [--id <id>] [--title <t>] [--mode explore|ask|execute] [--connection <name>] [--model <m>] [--cwd <dir>] [--task-queue <q>] [--live-broker <redis-url>]'],
  description: [
    'Each line you type is a message (typing while a turn runs queues the next one). While a turn runs you see its',
    'tool calls (→ bash {"command":"ls"}), the first line of each result, and approval requests:',
    '  ? write_file {...} — approve? [y/N/note]   y approves (y <note> with a note); n or Enter denies; other text denies with it as the note.',
    'In explore mode the agent may submit a plan: it is printed as text, then',
    '  ? approve the plan? [y / y ask / y execute / N / note]   y approves; y ask or y execute also switches the mode; n declines (other text: with it as the note).',
    'Commands: /interrupt, /status [<s>], /title <t>, /mode <explore|ask|execute>, /model <m>, /connection <name> (before the',
    'first message only), /help, /exit.',
    'Ctrl-C while a turn runs interrupts it; Ctrl-C at an idle prompt quits (the session goes on). No colours when',
    'stdout is not a terminal or NO_COLOR is set.',
  ].join('\n'),
  connects: true,
  options: {
    new: { type: 'string', value: '<agent>', help: 'start a new session of this agent' },
    input: { type: 'string', short: 'i', value: '<json|@file>', help: "with --new: the agent's input, for an agent that takes one: JSON, or @file with JSON" },
    agents: AGENTS_INPUT_OPTION,
    id: { type: 'string', value: '<id>', help: 'with --new: the session id', default: 'a fresh slug' },
    title: { type: 'string', value: '<title>', help: 'with --new: the title' },
    mode: { type: 'string', value: '<mode>', help: `with --new: permission mode (${PERMISSION_MODES.join(', ')})` },
    connection: { type: 'string', value: '<name>', help: "with --new: the worker's model connection (locked after the first message)" },
    model: { type: 'string', value: '<model>', help: 'with --new: the model, an id within the connection' },
    cwd: { type: 'string', value: '<dir>', help: 'with --new: working directory of the tools (on the worker)' },
    'task-queue': { type: 'string', short: 'q', value: '<name>', help: 'with --new: task queue of the worker', default: DEFAULT_TASK_QUEUE },
    'poll-ms': { type: 'string', value: '<ms>', help: 'how often a streaming model call is looked at for new text (without a broker)', default: '100' },
    ...LIVE_BROKER_OPTION,
    ...STORE_OPTION,
  },
  examples: [
    'fh chat 261122-amber-forest',
    'fh chat --new assistant --mode ask --cwd ~/src/app',
    'fh chat --new researcher --input \'{"task":"Summarise README.md"}\' --agents ./dist/agents.js',
    'fh chat --new assistant --connection openai --model gpt-5.1',
  ],
  run: (p, io) => runChat(p, io),
};

async function runChat(p: Parsed, io: Io): Promise<number> {
  const agent = str(p, 'new');
  const [id, ...extra] = p.positionals;
  if (agent === undefined && id === undefined) throw usage('fh chat needs a session id (fh chat <session-id>) or --new <agent>');
  if (agent !== undefined && id !== undefined) throw usage(`fh chat takes a session id or --new <agent>, not both (use --id ${id} to name the new session)`);
  if (extra.length) throw usage(`unexpected argument '${extra[0]}' (fh chat <session-id>)`);
  for (const o of ['input', 'agents', 'id', 'title', 'mode', 'connection', 'model', 'cwd']) {
    if (agent !== undefined || !strs(p, o).length) continue;
    if (o === 'input' || o === 'agents') throw usage(`--${o} goes with --new <agent>: a session takes its input when it starts`);
    throw usage(`--${o} goes with --new <agent> (to change a session's settings, use /mode, /title, … in the chat)`);
  }
  // The chat reads your messages from stdin, so the input cannot come from there too.
  if (str(p, 'input') === '-') throw usage('fh chat reads your messages from stdin: give --input as JSON or @file');
  const input = agent !== undefined && str(p, 'input') !== undefined ? await readInput(str(p, 'input')) : undefined;
  if (agent !== undefined) checkInput(p, agent, input, 'chat');
  const pollMs = int(p, 'poll-ms', 100, 20);
  const brokerUrl = liveBrokerUrl(p);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { getSession, startSession } = require('../../client/sessions') as typeof import('../../client/sessions');
  // With the workers' broker the chat blocks on Redis for live text instead of asking Temporal every pollMs
  // (made before connecting: without the redis package it fails at once).
  const broker = liveBrokerClient(brokerUrl);
  const conn = await connect(p);
  try {
    let handle: SessionHandle;
    if (agent !== undefined) {
      const settings: Record<string, string> = {};
      if (str(p, 'mode') !== undefined) settings.permissionMode = str(p, 'mode')!;
      if (str(p, 'connection') !== undefined) settings.connection = str(p, 'connection')!;
      if (str(p, 'model') !== undefined) settings.model = str(p, 'model')!;
      if (str(p, 'cwd') !== undefined) settings.workingDirectory = str(p, 'cwd')!;
      handle = await startSession(conn.client, agent, {
        ...(input !== undefined ? { input } : {}),
        ...(str(p, 'id') !== undefined ? { id: str(p, 'id') } : {}),
        ...(str(p, 'title') !== undefined ? { title: str(p, 'title') } : {}),
        ...(Object.keys(settings).length ? { settings } : {}),
        taskQueue: str(p, 'task-queue') ?? DEFAULT_TASK_QUEUE,
      });
    } else {
      handle = getSession(conn.client, id!);
    }
    // A wrong id fails here (exit 3), before the prompt opens; a missing worker within 15 s.
    const [info] = await Promise.all([conn.client.connection.withDeadline(Date.now() + 15_000, () => handle.info()), warnIfBrokerDown(broker, io)]);
    // A run that failed answers every message with its error: say so now rather than at the first prompt.
    if (info.failure) throw failure(`session ${info.id} has ended: its run failed with ${oneLine(info.failure.message).replace(/\.$/, '')} [${info.failure.code}]; start another with \`fh chat --new ${info.agent}${info.failure.code === 'INVALID_INPUT' ? " --input '<json>'" : ''}\``);
    return await new Chat(handle, info, { pollMs, ...(broker ? { broker } : {}) }).run();
  } catch (err) {
    if (isUnansweredRead(err)) {
      const idle = id ? await idleTaskQueue(conn, id).catch(() => undefined) : undefined;
      if (idle) throw failure(`session ${id} did not answer: ${noWorkerMessage(idle)}`);
      throw usage(`session ${id ?? ''} did not answer within 15 s: is a worker serving its task queue? Start one with \`fh worker --agents <module>\``);
    }
    throw asCliError(err, { settings: conn.settings });
  } finally {
    await broker?.close().catch(() => undefined);
    await conn.close().catch(() => undefined);
  }
}
