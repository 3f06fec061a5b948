import * as path from 'node:path';
import type { SearchAttributeTypeName } from '../../testing/temporal-cli';
import { FH_SEARCH_ATTRIBUTES } from '../../wire/search-attributes';
import { flag, int, str, strs, type Parsed } from '../args';
import { stdio, type Command, type Io } from '../context';
import { CliError, EXIT, usage } from '../errors';
import { onStopSignals } from '../stop-signals';

/** Search attributes `fh server` registers (agent runs by agent, sessions by status, labels, …): the SDK's registry. */
export { FH_SEARCH_ATTRIBUTES };

const TYPES: SearchAttributeTypeName[] = ['Keyword', 'Text', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList'];

export const serverCommand: Command = {
  name: 'server',
  summary: 'start a local Temporal dev server with the Web UI (state kept in .fh/temporal.db)',
  usage: ['server [--port 7233] [--ui-port 8233] [--db .fh/temporal.db | --ephemeral] [--dynamic-config-value KEY=VALUE]…'],
  description:
    'Runs `temporal server start-dev` on 127.0.0.1 with the Web UI and a persistent database, and registers the\n' +
    "SDK's search attributes (FhAgent, FhKind, FhStatus, ...). Finds the Temporal CLI on TEMPORAL_CLI_PATH, PATH or\n" +
    '.temporal/bin, or builds it with Go (minutes, once; progress is printed). Stops on Ctrl-C, SIGTERM, or when its\n' +
    'terminal closes (SIGHUP), and stops the dev server with it.',
  connects: false,
  options: {
    port: { type: 'string', value: '<n>', help: 'frontend (gRPC) port', default: '7233' },
    'ui-port': { type: 'string', value: '<n>', help: 'Web UI port', default: '8233' },
    db: { type: 'string', value: '<file>', help: 'SQLite database file', default: '.fh/temporal.db' },
    ephemeral: { type: 'boolean', help: 'keep state in memory only (no database file)' },
    namespace: { type: 'string', short: 'n', value: '<name>', help: 'namespace to create', default: 'default' },
    'search-attribute': { type: 'string', multiple: true, value: '<Name=Type>', help: 'register another search attribute' },
    'log-level': { type: 'string', value: '<level>', help: 'server log level (debug, info, warn, error)', default: 'warn' },
    'dynamic-config-value': {
      type: 'string',
      multiple: true,
      value: '<KEY=VALUE>',
      help: 'a server setting (VALUE is JSON: 40, true, "1s"; text that is not JSON is a string)',
    },
  },
  examples: [
    'fh server',
    'fh server --port 7234 --ui-port 8234 --db /tmp/fh.db',
    'fh server --dynamic-config-value limit.maxIDLength=255',
    'TEMPORAL_ADDRESS=127.0.0.1:7233 fh worker --agents ./agents.js   # in another terminal',
  ],
  run: (p, io) => runServer(p, io),
};

async function runServer(p: Parsed, io: Io = stdio): Promise<number> {
  if (p.positionals.length > 0) throw usage(`unexpected argument '${p.positionals[0]}' (fh server takes only options)`);
  const port = int(p, 'port', 7233, 1);
  const uiPort = int(p, 'ui-port', 8233, 1);
  if (port > 65535 || uiPort > 65535) throw usage('ports must be between 1 and 65535');
  const ephemeral = flag(p, 'ephemeral');
  if (ephemeral && str(p, 'db')) throw usage('--db and --ephemeral contradict each other: pick one');
  const searchAttributes: Record<string, SearchAttributeTypeName> = { ...FH_SEARCH_ATTRIBUTES };
  for (const spec of strs(p, 'search-attribute')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(\w+)$/.exec(spec);
    const type = m && TYPES.find((t) => t.toLowerCase() === m[2]!.toLowerCase());
    if (!m || !type) throw usage(`--search-attribute must be Name=Type with Type one of ${TYPES.join(', ')}; got '${spec}'`);
    searchAttributes[m[1]!] = type;
  }
  const dbFilename = ephemeral ? undefined : path.resolve(str(p, 'db') ?? path.join('.fh', 'temporal.db'));

  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startDevServer, dynamicConfigProblem, TemporalCliError } = require('../../testing/temporal-cli') as typeof import('../../testing/temporal-cli');
  const dynamicConfig = dynamicConfigFlags(strs(p, 'dynamic-config-value'), dynamicConfigProblem);
  io.err(`[fh server] starting the Temporal dev server on 127.0.0.1:${port}…`);
  let server: Awaited<ReturnType<typeof startDevServer>>;
  try {
    server = await startDevServer({
      ui: true,
      port,
      uiPort,
      dbFilename,
      namespace: str(p, 'namespace') ?? 'default',
      searchAttributes,
      logLevel: str(p, 'log-level') ?? 'warn',
      dynamicConfig,
      onProgress: (line) => io.err(`[fh server] ${line}`),
    });
  } catch (err) {
    if (err instanceof TemporalCliError) throw new CliError(EXIT.FAILURE, err.message.split('\n').join(' '));
    throw err;
  }

  return new Promise<number>((resolve) => {
    const keepAlive = setInterval(() => undefined, 1 << 30);
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        io.err(`[fh server] ${signal} again: exiting without waiting`);
        process.exit(EXIT.INTERRUPTED);
      }
      stopping = true;
      io.err(`[fh server] ${signal}: stopping the dev server…`);
      server.stop().then(
        () => {
          clearInterval(keepAlive);
          io.err('[fh server] stopped');
          resolve(EXIT.OK);
        },
        (err: unknown) => {
          clearInterval(keepAlive);
          io.err(`fh: error while stopping the dev server: ${err instanceof Error ? err.message : String(err)}`);
          resolve(EXIT.FAILURE);
        },
      );
    };
    onStopSignals(stop);
    // Printed once the signals are handled: a Ctrl-C the moment the prompt shows still stops the server.
    io.out(
      [
        'Temporal dev server is running',
        `  address:     ${server.address}    (workers and clients: TEMPORAL_ADDRESS=${server.address})`,
        `  namespace:   ${server.namespace}`,
        `  web UI:      ${server.uiUrl}`,
        `  database:    ${dbFilename ? path.relative(process.cwd(), dbFilename) || dbFilename : '(in memory)'}`,
        `  search attr: ${Object.entries(searchAttributes)
          .map(([n, t]) => `${n} (${t})`)
          .join(', ')}`,
        `  settings:    ${Object.entries(server.dynamicConfig)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(', ')}`,
        `  executable:  ${server.executable}`,
        'Press Ctrl+C to stop.',
      ].join('\n'),
    );
  });
}

/**
 * `--dynamic-config-value KEY=VALUE` flags as dynamic config (the Temporal CLI's flag, passed on): VALUE is JSON
 * (`40`, `true`, `"1s"`), and text that is not JSON is a string (`1s`), so a duration needs no shell quoting.
 * A flag the server could not take exits 2 naming it, before anything starts.
 */
function dynamicConfigFlags(flags: string[], problemOf: (key: string, value: unknown) => string | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at <= 0) throw usage(`--dynamic-config-value '${flag}' must be KEY=VALUE (e.g. limit.maxIDLength=255)`);
    const key = flag.slice(0, at);
    const text = flag.slice(at + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // not JSON: the text itself
    }
    const problem = problemOf(key, value);
    if (problem) throw usage(`--dynamic-config-value '${flag}': ${key} ${problem}`);
    out[key] = value as string | number | boolean;
  }
  return out;
}
