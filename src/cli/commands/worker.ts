import * as path from 'node:path';
import type { AgentDefinition } from '../../core/agent';
import type { ToolDefinition } from '../../core/tools';
import { DEFAULT_TASK_QUEUE } from '../../client/start';
import { connectionOptions, probeServer, ServerUnreachableError } from '../../client/connection';
import { str, strs, type Parsed } from '../args';
import { asCliError, installRuntime, logLevel, settingsFrom, STORE_OPTION, storeFrom, type Command, type Io } from '../context';
import { CliError, EXIT, oneLine, usage } from '../errors';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run a worker for the agents (and tools) in these modules',
  usage: ['worker --agents <module> [--agents <module>…] [--tools <module>…] [--task-queue <name>]'],
  description:
    'Loads the modules with Node (JavaScript, or TypeScript through a loader you preload with NODE_OPTIONS), bundles\n' +
    'their agents as workflow code (one workflow type per agent name) and serves them on the task queue. Tools are\n' +
    'the tool({...}) definitions exported by the agent and tool modules. The model is configured by ANTHROPIC_API_KEY,\n' +
    'ANTHROPIC_BASE_URL and ANTHROPIC_MODEL. Stops cleanly on Ctrl-C.',
  connects: true,
  options: {
    agents: { type: 'string', multiple: true, value: '<module>', help: 'module whose exports are agent definitions', env: 'FH_AGENTS' },
    tools: { type: 'string', multiple: true, value: '<module>', help: 'module whose exports are tool definitions' },
    'task-queue': { type: 'string', short: 'q', value: '<name>', help: 'task queue', default: DEFAULT_TASK_QUEUE },
    ...STORE_OPTION,
    'log-level': { type: 'string', value: '<level>', help: 'worker log level (trace, debug, info, warn, error)', default: 'warn' },
  },
  examples: [
    'fh worker --agents ./dist/agents.js',
    'fh worker --agents ./agents.js --tools ./tools.js --task-queue research',
    "NODE_OPTIONS='--import tsx' fh worker --agents ./src/agents.ts",
  ],
  run: (p, io) => runWorker(p, io),
};

/** Module paths from --agents, else FH_AGENTS (comma-separated). */
export function agentModules(p: Parsed, command: string): string[] {
  const given = strs(p, 'agents');
  const fromEnv = (process.env.FH_AGENTS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const modules = given.length > 0 ? given : fromEnv;
  if (modules.length === 0) throw usage(`fh ${command} needs --agents <module> (the module that exports your agents), or FH_AGENTS`);
  return modules.map((m) => path.resolve(m));
}

export function loadModule(file: string, what: string): unknown {
  let resolved: string;
  try {
    resolved = require.resolve(file);
  } catch {
    throw new CliError(EXIT.NOT_FOUND, `${what} module ${file} not found; check the path (it is resolved from ${process.cwd()})`);
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(resolved);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const ts = /\.(c|m)?tsx?$/.test(resolved);
    const hint = ts
      ? '; Node cannot load TypeScript by itself: compile it first, or preload a loader (NODE_OPTIONS="--import tsx")'
      : '';
    throw new CliError(EXIT.USAGE, `cannot load ${what} module ${file}: ${oneLine(e.message ?? String(err))}${hint}`);
  }
}

/** The agent definitions exported by these modules (a usage error when two share a name). */
export function loadAgents(files: string[]): AgentDefinition[] {
  const mods = files.map((f) => loadModule(f, 'agents'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { collectAgents } = require('../../workflows') as typeof import('../../workflows');
  try {
    return collectAgents(mods);
  } catch (err) {
    throw usage(oneLine((err as Error).message));
  }
}

/** Tool definitions among a module's exports (named, default, or arrays of them); built-ins excluded. */
export function collectTools(modules: unknown[]): ToolDefinition[] {
  const found = new Map<string, ToolDefinition>();
  const visit = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (typeof v !== 'object' || v === null) return;
    const t = v as ToolDefinition;
    if (t.kind !== 'tool' || typeof t.execute !== 'function') return;
    const prior = found.get(t.name);
    if (prior && prior !== t) throw usage(`two different tools are named '${t.name}' in the loaded modules; rename one`);
    found.set(t.name, t);
  };
  for (const mod of modules) {
    if (mod && typeof mod === 'object' && (mod as ToolDefinition).kind !== 'tool' && !Array.isArray(mod)) Object.values(mod).forEach(visit);
    else visit(mod);
  }
  return [...found.values()];
}

async function runWorker(p: Parsed, io: Io): Promise<number> {
  if (p.positionals.length > 0) throw usage(`unexpected argument '${p.positionals[0]}'; pass modules with --agents <module>`);
  const agentFiles = agentModules(p, 'worker');
  const toolFiles = strs(p, 'tools').map((m) => path.resolve(m));
  const taskQueue = str(p, 'task-queue') ?? DEFAULT_TASK_QUEUE;
  const settings = settingsFrom(p);

  const agentMods = agentFiles.map((f) => loadModule(f, 'agents'));
  const toolMods = toolFiles.map((f) => loadModule(f, 'tools'));
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
  const tools = collectTools([...agentMods, ...toolMods]);

  installRuntime(logLevel(p));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { NativeConnection } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createWorker } = require('../../worker/create-worker') as typeof import('../../worker/create-worker');

  await probeServer(settings).catch((err) => {
    throw asCliError(err, { settings });
  });
  let connection: Awaited<ReturnType<typeof NativeConnection.connect>>;
  try {
    connection = await NativeConnection.connect(connectionOptions(settings));
  } catch (err) {
    throw asCliError(new ServerUnreachableError(settings.address, oneLine((err as Error).message), settings.sources.address), { settings });
  }
  try {
    io.err(`[fh worker] bundling workflow code for ${agents.map((a) => a.name).join(', ')}…`);
    const worker = await createWorker({
      agents: agentFiles,
      tools,
      connection,
      namespace: settings.namespace,
      taskQueue,
      store: storeFrom(p),
    }).catch((err: unknown) => {
      throw asCliError(err, { settings });
    });
    io.err(
      `[fh worker] ready on task queue '${taskQueue}' (namespace ${settings.namespace} at ${settings.address}): ` +
        `agents ${agents.map((a) => a.name).join(', ')}; tools ${tools.length ? tools.map((t) => t.name).join(', ') : '(built-ins only)'}. Ctrl-C to stop.`,
    );
    // The Temporal runtime shuts the worker down on SIGINT/SIGTERM; run() then resolves.
    await worker.run();
    io.err('[fh worker] stopped');
    return EXIT.OK;
  } finally {
    await connection.close().catch(() => undefined);
  }
}
