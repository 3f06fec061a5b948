/** fh board: the web page for one namespace's sessions and flow runs, on 127.0.0.1 with a token in its URL. */
import * as path from 'node:path';
import { flag, int, str, strs, type Parsed } from '../args';
import { asCliError, connect, LIVE_BROKER_OPTION, liveBrokerClient, liveBrokerUrl, STORE_OPTION, storeFrom, warnIfBrokerDown, type Command, type Io } from '../context';
import { EXIT, usage } from '../errors';
import { nextStopSignal } from '../stop-signals';
import { parsePublicUrls } from '../../board/public-url';

export const boardCommand: Command = {
  name: 'board',
  summary: "a web page for the namespace's sessions (inbox, live conversation, approvals, context gauge, audit) and flow runs (graph, gates)",
  usage: ['board [--port 0] [--agents <module>] [--host 127.0.0.1 --allow-remote --token <t>] [--public-url <url>]… [--live-broker <redis-url>]'],
  description:
    'Serves the board from this package (no CDN; works offline) on 127.0.0.1 and prints its URL, which carries a\n' +
    'random access token (as Jupyter does): every request needs it. Binding to another address needs --allow-remote\n' +
    'and --token. The board answers only to the names it is opened by: its bind address (for 127.0.0.1, also\n' +
    'localhost and [::1]) and each --public-url, the URL a browser uses to reach it (this machine\'s IP or name, or\n' +
    'a proxy\'s). Bound to 0.0.0.0, name the address others use, or they get 421.\n' +
    '--agents enables the replay check of the audit view (the code a history is replayed against).\n' +
    '--live-broker reads live replies from Redis (the workers\' --live-broker) instead of asking Temporal while they stream.\n' +
    'Stops on Ctrl-C.',
  connects: true,
  options: {
    port: { type: 'string', value: '<n>', help: 'port (0: a free one)', default: '0' },
    host: { type: 'string', value: '<address>', help: 'address to bind', default: '127.0.0.1' },
    'allow-remote': { type: 'boolean', help: 'allow a non-loopback --host (needs --token)' },
    'public-url': { type: 'string', multiple: true, value: '<url>', help: 'a URL the board is reached at (http(s)://host[:port]); its Host and Origin are accepted' },
    token: { type: 'string', value: '<token>', help: 'the access token (default: random); at least 16 characters', env: 'FH_BOARD_TOKEN' },
    agents: { type: 'string', multiple: true, value: '<module>', help: 'agent module(s) for the replay check', env: 'FH_AGENTS' },
    ...STORE_OPTION,
    ...LIVE_BROKER_OPTION,
  },
  examples: ['fh board', 'fh board --port 8787 --agents ./dist/agents.js', 'fh board --host 0.0.0.0 --port 8787 --allow-remote --token "$(openssl rand -hex 24)" --public-url http://192.168.1.20:8787 --public-url http://devbox.lan:8787'],
  run: (p, io) => runBoard(p, io),
};

async function runBoard(p: Parsed, io: Io): Promise<number> {
  if (p.positionals.length > 0) throw usage(`unexpected argument '${p.positionals[0]}' (fh board takes only options)`);
  const port = int(p, 'port', 0, 0);
  if (port > 65535) throw usage('--port must be between 0 and 65535');
  const host = str(p, 'host') ?? '127.0.0.1';
  const token = str(p, 'token') ?? (process.env.FH_BOARD_TOKEN || undefined);
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  if (!loopback && !flag(p, 'allow-remote')) throw usage(`--host ${host} is not loopback: add --allow-remote (and --token) to expose the board`);
  if (!loopback && !token) throw usage('a board bound beyond loopback needs --token <t> (at least 16 characters)');
  if (token !== undefined && token.length < 16) throw usage('--token must be at least 16 characters');
  const publicUrl = strs(p, 'public-url');
  try {
    for (const u of publicUrl) parsePublicUrls(u, '--public-url');
  } catch (err) {
    throw usage((err as Error).message.replace(/^Invalid board options: /, ''));
  }
  const given = strs(p, 'agents');
  const agents = (given.length ? given : (process.env.FH_AGENTS ?? '').split(',').map((s) => s.trim()).filter(Boolean)).map((m) => path.resolve(m));
  const brokerUrl = liveBrokerUrl(p);
  const broker = liveBrokerClient(brokerUrl); // before connecting: without the redis package it fails at once
  const conn = await connect(p);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { board } = require('../../board') as typeof import('../../board');
  let server;
  try {
    server = await board({ client: conn.client, agents, store: storeFrom(p), host, port, allowRemote: !loopback, publicUrl, ...(token ? { token } : {}), ...(broker ? { broker } : {}) });
  } catch (err) {
    await broker?.close();
    await conn.close();
    throw asCliError(err);
  }
  const also = server.publicUrls.map((u) => `\n  also: ${u}`).join('');
  // The signals are handled before the prompt shows: a Ctrl-C the moment it does still closes the board.
  const signalled = nextStopSignal();
  io.out(`fh board for namespace '${conn.settings.namespace}' at ${conn.settings.address}\n  open: ${server.url}${also}\nPress Ctrl+C to stop.`);
  void warnIfBrokerDown(broker, io);
  await signalled;
  await server
    .close()
    .then(() => broker?.close())
    .then(() => conn.close())
    .catch(() => undefined);
  return EXIT.OK;
}
