import * as path from 'node:path';
import type { AgentDefinition } from '../../core/agent';
import { ToolNotRegisteredError } from '../../core/errors';
import { DuplicateToolImplementationError } from '../../core/tool-registry';
import { loadModule as loadUserModule, ModuleLoadError } from '../../worker/load-modules';
import { collectToolCode } from '../../worker/tool-code';
import { DEFAULT_TASK_QUEUE } from '../../client/start';
import { ServerUnreachableError } from '../../client/connection';
import { str, strs, type Parsed } from '../args';
import { asCliError, installRuntime, LIVE_BROKER_OPTION, liveBrokerUrl, logLevel, settingsFrom, STORE_OPTION, storeFrom, type Command, type Io } from '../context';
import { CliError, EXIT, oneLine, usage } from '../errors';
import { chooseSessionCache } from '../../worker/session-cache';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run a worker for the agents (and tools) in these modules',
  usage: ['worker --agents <module>… [--tools <module>…] [--task-queue <name>] [--live-broker <redis-url>] [--session-cache-memory <size|share>]'],
  description:
    'Loads the modules with Node, bundles their agents as workflow code (one workflow type per agent name) and serves\n' +
    'them on the task queue. TypeScript modules load through tsx when it is installed (npm i -D tsx), or a loader you\n' +
    "preload with NODE_OPTIONS. Tool code is the implement(...) results and the tools with execute that the agent and\n" +
    '--tools modules export. The model is configured by ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and ANTHROPIC_MODEL.\n' +
    'Stops cleanly on Ctrl-C.',
  connects: true,
  options: {
    agents: { type: 'string', variadic: true, value: '<module>…', help: 'module whose exports are agent definitions', env: 'FH_AGENTS' },
    tools: { type: 'string', variadic: true, value: '<module>…', help: 'module whose exports are tool code (implement(...), tools with execute)' },
    'task-queue': { type: 'string', short: 'q', value: '<name>', help: 'task queue', default: DEFAULT_TASK_QUEUE },
    ...STORE_OPTION,
    ...LIVE_BROKER_OPTION,
    'session-cache-memory': {
      type: 'string',
      value: '<size|share>',
      help: "memory idle cached sessions may hold: a size (4GB, 2GiB, 3000000000 bytes) or a share of the worker's memory limit (0.5)",
      env: 'FH_SESSION_CACHE_MEMORY',
      default: '0.2',
    },
    'log-level': { type: 'string', value: '<level>', help: 'worker log level (trace, debug, info, warn, error)', default: 'warn' },
  },
  examples: [
    'fh worker --agents ./dist/agents.js',
    'fh worker --agents ./agents.js --tools ./tools.js --task-queue research',
    'fh worker --agents ./dist/support.js ./dist/research.js   # several modules',
    "fh worker --agents ./src/agents.ts --tools ./src/tools.ts   # TypeScript: with tsx installed",
    'fh worker --agents ./dist/agents.js --live-broker redis://127.0.0.1:6379   # the live path on Redis',
    'fh worker --agents ./dist/agents.js --session-cache-memory 0.5   # a container that runs only the worker',
  ],
  run: (p, io) => runWorker(p, io),
};

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)?$/i;
const UNIT: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/**
 * --session-cache-memory (or FH_SESSION_CACHE_MEMORY) as createWorker's `sessionCacheMemory`: a size with
 * an optional unit (bytes), or a bare number up to 1 (a share of the memory limit). Checked here by the
 * rule createWorker applies, so a bad value is a usage error naming the flag before any module loads.
 */
export function sessionCacheMemoryFrom(p: Parsed): number | undefined {
  const raw = str(p, 'session-cache-memory') ?? (process.env.FH_SESSION_CACHE_MEMORY || undefined);
  if (raw === undefined) return undefined;
  const m = SIZE.exec(raw.trim());
  const value = !m ? NaN : m[2] ? Math.round(Number(m[1]) * UNIT[m[2].toLowerCase()]!) : Number(m[1]);
  try {
    chooseSessionCache({ sessionCacheMemory: value, memoryLimitBytes: 1e9, heapCeiling: 10 });
  } catch {
    throw usage(`--session-cache-memory must be a size (4GB, 2GiB, 3000000000 bytes) or a share of the worker's memory limit (a number in (0, 1], e.g. 0.5); got '${raw}'`);
  }
  return value;
}

/** Module paths from --agents, else FH_AGENTS (comma-separated). */
export function agentModules(p: Parsed, command: string): string[] {
  const given = strs(p, 'agents');
  const fromEnv = (process.env.FH_AGENTS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const modules = given.length > 0 ? given : fromEnv;
  if (modules.length === 0) throw usage(`fh ${command} needs --agents <module> (the module that exports your agents), or FH_AGENTS`);
  return modules.map((m) => path.resolve(m));
}

/**
 * Node loads TypeScript only through a loader. When a module is TypeScript and none is registered,
 * use tsx if the project (or this SDK) has it installed, so `fh worker --agents ./agents.ts` works as
 * written; otherwise loading fails with an error that says what to do.
 */
export function registerTypeScriptLoader(files: string[]): 'tsx' | 'present' | 'none' | 'unneeded' {
  if (!files.some((f) => TYPESCRIPT_FILE.test(f))) return 'unneeded';
  if (require.extensions?.['.ts']) return 'present';
  for (const from of [process.cwd(), ...files.map((f) => path.dirname(f)), __dirname]) {
    let api: string;
    try {
      api = require.resolve('tsx/cjs/api', { paths: [from] });
    } catch {
      continue;
    }
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require(api) as { register(): unknown }).register();
    return 'tsx';
  }
  return 'none';
}

const TYPESCRIPT_FILE = /\.(c|m)?tsx?$/;

function loadModule(file: string, what: 'agents' | 'tools'): unknown {
  try {
    return loadUserModule(file, what);
  } catch (err) {
    if (err instanceof ModuleLoadError) throw new CliError(err.reason === 'not_found' ? EXIT.NOT_FOUND : EXIT.USAGE, oneLine(err.message));
    throw err;
  }
}

/** The agent definitions exported by these modules (a usage error when two share a name). */
export function loadAgents(files: string[]): AgentDefinition[] {
  registerTypeScriptLoader(files);
  const mods = files.map((f) => loadModule(f, 'agents'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { collectAgents } = require('../../workflows') as typeof import('../../workflows');
  try {
    return collectAgents(mods);
  } catch (err) {
    throw usage(oneLine((err as Error).message));
  }
}

async function runWorker(p: Parsed, io: Io): Promise<number> {
  if (p.positionals.length > 0) throw usage(`unexpected argument '${p.positionals[0]}'; pass modules with --agents <module>`);
  const agentFiles = agentModules(p, 'worker');
  const toolFiles = strs(p, 'tools').map((m) => path.resolve(m));
  const taskQueue = str(p, 'task-queue') ?? DEFAULT_TASK_QUEUE;
  const broker = liveBrokerUrl(p); // a malformed URL is a usage error before any module loads
  const sessionCacheMemory = sessionCacheMemoryFrom(p);
  const settings = settingsFrom(p);

  const loader = registerTypeScriptLoader([...agentFiles, ...toolFiles]);
  if (loader === 'tsx') io.err('[fh worker] loading TypeScript modules with tsx');
  const agentMods = agentFiles.map((f) => loadModule(f, 'agents'));
  toolFiles.forEach((f) => loadModule(f, 'tools'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { collectAgents } = require('../../workflows') as typeof import('../../workflows');
  let agents: AgentDefinition[];
  try {
    agents = collectAgents(agentMods);
  } catch (err) {
    throw usage(oneLine((err as Error).message));
  }
  if (agents.length === 0) {
    throw usage(`no agents found in ${agentFiles.join(', ')}: export agent definitions (agent({ name, run })) from the module`);
  }
  let tools: string[];
  try {
    tools = collectToolCode(agentFiles, toolFiles).names();
  } catch (err) {
    if (err instanceof ToolNotRegisteredError || err instanceof DuplicateToolImplementationError) throw usage(oneLine(err.message));
    throw err;
  }

  installRuntime(logLevel(p));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createWorker } = require('../../worker/create-worker') as typeof import('../../worker/create-worker');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { connectWorker } = require('../../worker/connect-worker') as typeof import('../../worker/connect-worker');

  // The same resolution as every fh command and createWorker: flags, TEMPORAL_*, the config file's profile.
  const { connection } = await connectWorker(settings).catch((err: unknown) => {
    throw asCliError(err instanceof ServerUnreachableError ? new ServerUnreachableError(err.address, oneLine(err.detail), err.source) : err, { settings });
  });
  try {
    io.err(`[fh worker] bundling workflow code for ${agents.map((a) => a.name).join(', ')}…`);
    const worker = await createWorker({
      agents: agentFiles,
      tools: toolFiles,
      connection,
      namespace: settings.namespace,
      taskQueue,
      store: storeFrom(p),
      ...(broker ? { liveBroker: { url: broker } } : {}),
      ...(sessionCacheMemory !== undefined ? { sessionCacheMemory } : {}),
    }).catch((err: unknown) => {
      throw asCliError(err, { settings });
    });
    io.err(
      `[fh worker] ready on task queue '${taskQueue}' (namespace ${settings.namespace} at ${settings.address}): ` +
        `agents ${agents.map((a) => a.name).join(', ')}; tools ${tools.length ? tools.join(', ') : '(built-ins only)'}. Ctrl-C to stop.`,
    );
    // The cache the worker runs with, and why (the plugin's own log line is at INFO, below fh worker's default level).
    io.err(`[fh worker] session cache: up to ${worker.options.maxCachedWorkflows} sessions (${chooseSessionCache({ sessionCacheMemory }).reason})`);
    // The Temporal runtime shuts the worker down on SIGINT/SIGTERM; run() then resolves.
    await worker.run();
    io.err('[fh worker] stopped');
    return EXIT.OK;
  } finally {
    await connection.close().catch(() => undefined);
  }
}
