/**
 * `fh demo`: the first run, from an installed package, with no API key and no clone. Starts a local
 * Temporal dev server (with the Web UI), a worker, and — without ANTHROPIC_API_KEY — the scripted fake
 * Anthropic server, then runs a small agent task as a durable workflow, printing each tool call, the
 * result and where to see the run in the UI. It says plainly when the model is the scripted fake.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { flag, str, type Parsed } from '../args';
import { stdio, type Command, type Io } from '../context';
import { CliError, EXIT, usage } from '../errors';
import { nextStopSignal } from '../stop-signals';
import type { ModelConnectionSettings } from '../../activities/models/connections';

/** The installed package's root (dist/cli/commands/demo.js → the directory of its package.json). */
const PACKAGE_ROOT = path.resolve(__dirname, '..', '..', '..');

export const demoCommand: Command = {
  name: 'demo',
  summary: 'run an agent as a durable workflow on a local Temporal dev server (no API key needed)',
  usage: ['demo [--provider anthropic|openai|google] [--exit | --stay]'],
  description:
    'Starts a Temporal dev server with the Web UI, a worker and a small agent that writes, checks and fixes a file with\n' +
    'the built-in tools. With ANTHROPIC_API_KEY set the model is Claude; without it, the SCRIPTED fake Anthropic server\n' +
    'replays canned replies (it is not a model). Finds the Temporal CLI on TEMPORAL_CLI_PATH, PATH or .temporal/bin, or\n' +
    'builds it with Go. In a terminal the server stays up for the UI until Ctrl-C; otherwise it stops when the run ends.\n' +
    "--provider openai runs it on the worker's `openai` connection (OpenAI's Responses API): with OPENAI_API_KEY set the\n" +
    'model is OPENAI_MODEL (default gpt-5.1); without it, the SCRIPTED fake OpenAI Responses server replays the same\n' +
    "canned replies. --provider google does the same on the `google` connection (Gemini): GEMINI_API_KEY or GOOGLE_API_KEY,\n" +
    'GEMINI_MODEL (default gemini-2.5-flash), else the SCRIPTED fake Gemini server.',
  connects: false,
  options: {
    exit: { type: 'boolean', help: 'stop as soon as the run ends, even in a terminal' },
    stay: { type: 'boolean', help: 'keep the dev server up for the UI until Ctrl-C, even without a terminal' },
    provider: { type: 'string', value: '<name>', help: "the model's provider: anthropic, openai (the Responses API) or google (Gemini)", default: 'anthropic' },
  },
  examples: ['npx fh demo', 'ANTHROPIC_API_KEY=sk-… npx fh demo --exit', 'npx fh demo --provider openai', 'npx fh demo --provider google'],
  run: (p, io) => runDemo(p, io),
};

async function runDemo(p: Parsed, io: Io = stdio): Promise<number> {
  if (p.positionals.length > 0) throw usage(`unexpected argument '${p.positionals[0]}' (fh demo takes only options)`);
  if (flag(p, 'exit') && flag(p, 'stay')) throw usage('--exit and --stay contradict each other: pick one');
  const provider = str(p, 'provider') ?? 'anthropic';
  if (provider !== 'anthropic' && !(provider in OTHER_PROVIDERS)) throw usage(`--provider must be anthropic, openai or google, not '${provider}'`);
  // The provider's SDK is an optional peer: say so before starting anything, not as the run's first failure.
  const pkg = provider === 'anthropic' ? undefined : OTHER_PROVIDERS[provider as OtherProvider].pkg;
  if (pkg && !resolvable(pkg)) {
    throw new CliError(EXIT.FAILURE, `--provider ${provider} needs the ${pkg} package, an optional dependency: install it with \`npm install ${pkg}\`, then run the demo again.`);
  }
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { Runtime, DefaultLogger } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  const { Client } = require('@temporalio/client') as typeof import('@temporalio/client');
  const { startAgent } = require('../../client/start') as typeof import('../../client/start');
  const { createWorker, FabricHarnessPlugin } = require('../../worker') as typeof import('../../worker');
  const { FileTranscriptStore } = require('../../activities/stores/transcript-store') as typeof import('../../activities/stores/transcript-store');
  const { startFake } = require('../fake-servers') as typeof import('../fake-servers');
  const { startDevServer, TemporalCliError } = require('../../testing/temporal-cli') as typeof import('../../testing/temporal-cli');
  const { FH_SEARCH_ATTRIBUTES } = require('../../wire/search-attributes') as typeof import('../../wire/search-attributes');
  const { DEMO_AGENT, DEMO_AGENT_MODULE, demoTask, demoScript } = require('../demo/script') as typeof import('../demo/script');
  const { confinementHint, defaultConfinement, probeConfinement } = require('../../activities/tools/sandbox/sandbox') as typeof import('../../activities/tools/sandbox/sandbox');
  const { sideRequestRoute } = require('../fake-script') as typeof import('../fake-script');
  /* eslint-enable @typescript-eslint/no-require-imports */
  Runtime.install({ logger: new DefaultLogger('WARN') });

  // The agent module, beside a link to this package so that it (and the worker loading it) finds
  // `@fabric-harness/sdk` wherever `fh` was started from.
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-demo-'));
  await fs.mkdir(path.join(work, 'node_modules', '@fabric-harness'), { recursive: true });
  await fs.symlink(PACKAGE_ROOT, path.join(work, 'node_modules', '@fabric-harness', 'sdk'), 'dir');
  await fs.writeFile(path.join(work, 'agents.js'), DEMO_AGENT_MODULE);
  const sandbox = path.join(work, 'sandbox');
  await fs.mkdir(sandbox);

  // bash runs confined or not at all: where this machine has no confinement, say what to do in one
  // line and run the demo with the file tools only (the worker's default would refuse every bash call).
  const confinement = probeConfinement(defaultConfinement());
  const bash = confinement.ok;
  if (!confinement.ok) io.out(`${confinementHint(confinement.reason)} The demo goes on without bash.`);
  const task = demoTask(bash);

  const cleanups: Array<() => Promise<unknown>> = [() => fs.rm(work, { recursive: true, force: true })];
  try {
    const models = await demoModel(provider as DemoProvider, async () => {
      let fake: Awaited<ReturnType<typeof startFake>> | undefined;
      fake = await startFake(provider as DemoProvider, { script: demoScript(bash), route: sideRequestRoute(() => fake?.remaining() ?? 0) });
      const started = fake;
      cleanups.unshift(() => started.stop());
      return started.url;
    }, io);

    let server: Awaited<ReturnType<typeof startDevServer>>;
    try {
      server = await startDevServer({ ui: true, searchAttributes: { ...FH_SEARCH_ATTRIBUTES }, onProgress: (l) => io.err(`[temporal] ${l}`) });
    } catch (err) {
      if (err instanceof TemporalCliError) throw new CliError(EXIT.FAILURE, err.message.split('\n').join(' '));
      throw err;
    }
    cleanups.unshift(() => server.stop());

    const store = new FileTranscriptStore(path.join(work, 'store'));
    const taskQueue = 'fabric-harness-demo';
    const worker = await createWorker({
      agents: path.join(work, 'agents.js'),
      connection: server.env.nativeConnection,
      namespace: server.namespace,
      taskQueue,
      ...(models.model ? { model: models.model } : {}),
      ...(models.connections ? { connections: models.connections } : {}),
      store,
      onEvent: (event) => {
        if (event.type === 'tool_call') io.out(`  → tool ${event.data.name} ${JSON.stringify(event.data.input).slice(0, 120)}`);
        if (event.type === 'tool_result') io.out(`  ← ${event.data.isError ? 'error' : 'ok'}: ${event.data.content.replace(/\s+/g, ' ').slice(0, 100)}`);
      },
    });
    const client = new Client({ connection: server.env.connection, namespace: server.namespace, plugins: [new FabricHarnessPlugin({ store })] });
    const workflowId = `demo-notes-keeper-${Date.now()}`;
    const result = await worker.runUntil(async () => {
      const handle = await startAgent(client, DEMO_AGENT, { task, dir: sandbox, bash, ...models.run }, { workflowId, taskQueue });
      const on = models.run ? `, connection ${models.run.connection}, model ${models.run.model}` : '';
      io.out(`\nStarted workflow ${workflowId} (agent ${DEMO_AGENT}${on}, sandbox ${sandbox})`);
      io.out(`Task: ${task}\n`);
      return (await handle.result()) as { reply: string; usage: { modelCalls: number; inputTokens: number; outputTokens: number } };
    });
    io.out(`\nResult: ${result.reply}`);
    io.out(`Usage: ${result.usage.modelCalls} model calls, ${result.usage.inputTokens} input / ${result.usage.outputTokens} output tokens`);
    io.out(`notes.md now reads:\n${await fs.readFile(path.join(sandbox, 'notes.md'), 'utf8').catch(() => '(missing)')}`);
    const ui = `${server.uiUrl}/namespaces/${server.namespace}/workflows/${workflowId}`;
    const stay = flag(p, 'stay') || (process.stdout.isTTY && !flag(p, 'exit'));
    // A link printed just before the server stops leads nowhere: without a terminal (or with --exit) say so.
    if (!stay) {
      io.out(`The dev server stops with the demo, and its UI with it: \`fh demo --stay\` keeps it up to open the run at ${ui}`);
    } else {
      io.out(`Temporal UI: ${ui}`);
      const signalled = nextStopSignal(); // handled before the prompt shows
      io.out('\nThe dev server stays up for the UI. Press Ctrl-C to stop.');
      await signalled;
    }
    return 0;
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

type DemoProvider = 'anthropic' | OtherProvider;
type OtherProvider = 'openai' | 'google';

/** The providers besides Anthropic: the worker's connection of that name, its SDK, key and model variables. */
const OTHER_PROVIDERS: Record<OtherProvider, { pkg: string; keys: string[]; modelEnv: string; defaultModel: string; api: string }> = {
  openai: { pkg: 'openai', keys: ['OPENAI_API_KEY'], modelEnv: 'OPENAI_MODEL', defaultModel: 'gpt-5.1', api: 'OpenAI Responses' },
  google: { pkg: '@google/genai', keys: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'], modelEnv: 'GEMINI_MODEL', defaultModel: 'gemini-2.5-flash', api: 'Gemini' },
};

type DemoModel = {
  /** The worker's default (Anthropic) settings, when the demo runs on Anthropic's fake. */
  model?: { apiKey?: string; baseURL?: string };
  /** The connection the run names, by its provider's name (the fake's settings, or none: the environment's). */
  connections?: Record<string, ModelConnectionSettings>;
  /** What the run names: `init({ connection, model })` in the demo agent. */
  run?: { connection: string; model: string };
};

/**
 * The demo's model: the provider's real API when its key is set, else its scripted fake (started by
 * `startFake`, which returns its URL). On another provider than Anthropic the run names that provider's
 * connection and a model in it; the default connection stays Anthropic's, untouched.
 */
async function demoModel(provider: DemoProvider, startFake: () => Promise<string>, io: Io): Promise<DemoModel> {
  if (provider === 'anthropic') {
    if (process.env.ANTHROPIC_API_KEY) {
      io.out(`Model: Claude via the Anthropic API (${process.env.ANTHROPIC_MODEL ?? 'the SDK default model'}).`);
      return {};
    }
    const url = await startFake();
    io.out('Model: none. ANTHROPIC_API_KEY is not set, so the demo uses the SCRIPTED fake Anthropic server');
    io.out(`       (${url}): it replays canned replies, it is not a model. Set ANTHROPIC_API_KEY for Claude.`);
    return { model: { apiKey: 'scripted-demo', baseURL: url } };
  }
  const p = OTHER_PROVIDERS[provider];
  const model = process.env[p.modelEnv]?.trim() || p.defaultModel;
  const run = { connection: provider, model };
  const key = p.keys.find((k) => process.env[k]?.trim());
  if (key) {
    io.out(`Model: ${model} via the ${p.api} API (connection ${provider}, ${key}).`);
    return { run };
  }
  const url = await startFake();
  io.out(`Model: none. ${p.keys.join(' / ')} is not set, so the demo uses the SCRIPTED fake ${p.api} server`);
  io.out(`       (${url}): it replays canned replies, it is not a model. Set ${p.keys[0]} for ${provider === 'openai' ? 'OpenAI' : 'Gemini'}.`);
  return { connections: { [provider]: { provider, apiKey: 'scripted-demo', baseURL: url } as ModelConnectionSettings }, run };
}

function resolvable(pkg: string): boolean {
  try {
    require.resolve(pkg);
    return true;
  } catch {
    return false;
  }
}
