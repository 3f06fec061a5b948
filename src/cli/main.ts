#!/usr/bin/env node
/**
 * `fh`: run agents as durable Temporal workflows, inspect them, and audit their histories.
 * Commands load their dependencies lazily, so `fh --help` and errors in arguments are instant.
 */
import { CONNECTION_OPTIONS, HELP_OPTION, optionsHelp, parse, type Options } from './args';
import type { Command, Io } from './context';
import { CliError, EXIT, EXIT_CODES_HELP, oneLine } from './errors';

const VERSION: string = (() => {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('../../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
})();

/* eslint-disable @typescript-eslint/no-require-imports */
const COMMANDS: Record<string, () => Command> = {
  server: () => (require('./commands/server') as typeof import('./commands/server')).serverCommand,
  worker: () => (require('./commands/worker') as typeof import('./commands/worker')).workerCommand,
  run: () => (require('./commands/run') as typeof import('./commands/run')).runCommand,
  list: () => (require('./commands/inspect') as typeof import('./commands/inspect')).listCommand,
  state: () => (require('./commands/inspect') as typeof import('./commands/inspect')).stateCommand,
  budget: () => (require('./commands/inspect') as typeof import('./commands/inspect')).budgetCommand,
  history: () => (require('./commands/history') as typeof import('./commands/history')).historyCommand,
  replay: () => (require('./commands/history') as typeof import('./commands/history')).replayCommand,
  audit: () => (require('./commands/audit') as typeof import('./commands/audit')).auditCommand,
  prompt: () => (require('./commands/interact') as typeof import('./commands/interact')).promptCommand,
  compact: () => (require('./commands/interact') as typeof import('./commands/interact')).compactCommand,
  close: () => (require('./commands/interact') as typeof import('./commands/interact')).closeCommand,
  terminate: () => (require('./commands/interact') as typeof import('./commands/interact')).terminateCommand,
  store: () => (require('./commands/store') as typeof import('./commands/store')).storeCommand,
  session: () => (require('./commands/session') as typeof import('./commands/session')).sessionCommand,
  chat: () => (require('./commands/chat') as typeof import('./commands/chat')).chatCommand,
  board: () => (require('./commands/board') as typeof import('./commands/board')).boardCommand,
  flow: () => (require('./commands/flow') as typeof import('./commands/flow')).flowCommand,
  demo: () => (require('./commands/demo') as typeof import('./commands/demo')).demoCommand,
  fake: () => (require('./commands/fake') as typeof import('./commands/fake')).fakeCommand,
  init: () => (require('./commands/init') as typeof import('./commands/init')).initCommand,
};
/* eslint-enable @typescript-eslint/no-require-imports */

const SUMMARY_LINES: Array<[string, string]> = [
  ['init [dir] [--cjs]', 'create a project: an agent with a tool, a worker, a client, a test, `npm run dev`'],
  ['demo', 'first run: an agent as a durable workflow on a local dev server (no API key needed)'],
  ['fake [--script <file>]', 'run the scripted fake Anthropic server (not a model) for your agents'],
  ['server', 'start a local Temporal dev server with the Web UI (state in .fh/temporal.db)'],
  ['worker --agents <module>', 'run a worker for the agents and tools in these modules'],
  ['run <agent> --input <json>', 'start an agent as a durable workflow and wait for its result'],
  ['list', 'list agent runs: workflow id, agent, status, start time'],
  ['state <workflow-id>', "show a run's compaction state"],
  ['budget <workflow-id>', "show a run's context budget, one bar per layer"],
  ['history <workflow-id|file>', "print a run's audit transcript (Markdown, or --json)"],
  ['history export <id> <file>', "save a run's history as JSON (for replay and offline audits)"],
  ['replay <id|file> --agents <m>', 'replay a run against the current code; exit 1 on divergence'],
  ['audit export|verify|show|search', 'sealed audit bundles: a run and its store blobs, verified offline (fh audit --help)'],
  ['prompt <workflow-id> <text>', 'send a prompt to a running agent and print its reply'],
  ['compact <workflow-id>', "compact a running agent's session now"],
  ['close <workflow-id>', 'tell a serving agent to finish'],
  ['terminate <workflow-id>', 'end a run now (e.g. one no worker can serve)'],
  ['store gc [--dry-run]', 'remove store blobs no retained history refers to'],
  ['session new|list|show|prompt|…', 'long-lived sessions: start, list, prompt, approve, label, fork, delete (fh session --help)'],
  ['chat <session-id>', 'chat with a session in the terminal (approvals, interrupts, settings)'],
  ['board [--port <n>]', "a web page for the namespace's sessions (inbox, live conversation, gauge, audit)"],
  ['flow run|show|gate|resume|history', 'flows: stages from a DOT graph sharing a context (fh flow --help)'],
];

export function mainHelp(): string {
  const w = Math.max(...SUMMARY_LINES.map(([c]) => c.length));
  return [
    `fh ${VERSION} — run LLM agents as durable Temporal workflows, inspect them, and audit their histories`,
    '',
    'Usage: fh <command> [arguments] [options]',
    '',
    'Commands:',
    ...SUMMARY_LINES.map(([c, s]) => `  ${c.padEnd(w)}  ${s}`),
    '',
    'Connection (every command that talks to Temporal; flags override the environment):',
    optionsHelp(CONNECTION_OPTIONS),
    '',
    'Read commands (list, state, budget, history, replay, run) take --json for machine-readable output.',
    '',
    EXIT_CODES_HELP,
    '',
    'Examples:',
    '  fh server                                            # terminal 1: local Temporal + Web UI',
    '  fh worker --agents ./dist/agents.js                  # terminal 2: serve your agents',
    '  fh run researcher --input \'{"task":"Summarise README.md"}\' --workflow-id research-1',
    '  fh state research-1 && fh budget research-1',
    '  fh history research-1 > research-1.md',
    '  fh history export research-1 research-1.json && fh replay research-1.json --agents ./dist/agents.js',
    '',
    'Run `fh <command> --help` for a command\'s options and examples.',
  ].join('\n');
}

export function commandHelp(c: Command): string {
  const lines = [`Usage: ${c.usage.map((u) => `fh ${u}`).join('\n       ')}`, '', `${c.summary.charAt(0).toUpperCase()}${c.summary.slice(1)}.`];
  if (c.description) lines.push('', c.description);
  if (c.subcommands) {
    const subs = Object.values(c.subcommands);
    const w = Math.max(...subs.map((s) => s.name.length));
    lines.push('', 'Commands:', ...subs.map((s) => `  fh ${s.name.padEnd(w)}  ${s.summary}`), '', `Run \`fh ${c.name} <command> --help\` for a command's options.`);
  }
  lines.push('', 'Options:', optionsHelp({ ...c.options, ...HELP_OPTION }));
  if (c.connects) lines.push('', 'Connection:', optionsHelp(CONNECTION_OPTIONS));
  lines.push('', 'Examples:', ...c.examples.map((e) => `  ${e}`), '', EXIT_CODES_HELP);
  return lines.join('\n');
}

function suggest(name: string): string {
  const names = Object.keys(COMMANDS);
  const close = names.find((n) => n.startsWith(name.slice(0, 2)) || name.startsWith(n));
  return close ? `; did you mean \`fh ${close}\`?` : '';
}

/** Runs `fh` with these arguments; resolves to the exit code (errors are printed, one line). */
export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (!name || name === '--help' || name === '-h' || name === 'help') {
      const topic = name === 'help' ? rest[0] : undefined;
      if (topic && COMMANDS[topic]) io.out(commandHelp(COMMANDS[topic]!()));
      else io.out(mainHelp());
      return name ? EXIT.OK : EXIT.USAGE;
    }
    if (name === '--version' || name === '-v' || name === 'version') {
      io.out(VERSION);
      return EXIT.OK;
    }
    if (name.startsWith('-')) throw new CliError(EXIT.USAGE, `options go after the command: fh <command> ${name} …; run \`fh --help\` for the commands`);
    const load = COMMANDS[name];
    if (!load) throw new CliError(EXIT.USAGE, `unknown command '${name}'${suggest(name)}; run \`fh --help\` for the commands`);
    let command = load();
    let args = rest;
    if (command.subcommands && args[0] !== undefined && !args[0].startsWith('-')) {
      const sub = command.subcommands[args[0]];
      if (!sub) throw new CliError(EXIT.USAGE, `unknown command 'fh ${name} ${args[0]}'; the ${name} commands: ${Object.keys(command.subcommands).join(', ')}`);
      command = sub;
      args = args.slice(1);
    }
    const options: Options = { ...command.options, ...HELP_OPTION, ...(command.connects ? CONNECTION_OPTIONS : {}) };
    const parsed = parse(args, options, command.name);
    if (parsed.values.help) {
      io.out(commandHelp(command));
      return EXIT.OK;
    }
    return await command.run(parsed, io);
  } catch (err) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { asCliError } = require('./context') as typeof import('./context');
    const e = err instanceof CliError ? err : asCliError(err);
    io.err(`fh: ${oneLine(e.message)}`);
    if (process.env.FH_DEBUG && err instanceof Error && err.stack) io.err(err.stack);
    return e.exitCode;
  }
}

if (require.main === module) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { stdio } = require('./context') as typeof import('./context');
  main(process.argv.slice(2), stdio).then(
    (code) => {
      process.exitCode = code;
      // Long-running commands (server, worker) resolve only when stopped; the rest end here even if a
      // library left a handle open (gRPC channels close lazily).
      // Exit only once what was written has been flushed (stdout may be a pipe).
      const exit = () => process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
      setTimeout(exit, 300).unref();
    },
    (err: unknown) => {
      process.stderr.write(`fh: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(EXIT.FAILURE);
    },
  );
}
