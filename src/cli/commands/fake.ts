/**
 * `fh fake`: the scripted fake Anthropic server (the one the SDK's tests use) on a port, for running
 * one's own agents without an API key. It replays the steps it is given; it is not a model.
 */
import { int, str, strs, type Parsed } from '../args';
import { stdio, type Command, type Io } from '../context';
import { usage } from '../errors';
import { readScriptFile, SCRIPT_FORMAT, sideRequestRoute } from '../fake-script';

export const fakeCommand: Command = {
  name: 'fake',
  summary: 'run the scripted fake Anthropic server (not a model) for agents without an API key',
  usage: ['fake [--port 8787] [--script steps.json] [--say <text>]…'],
  description:
    'Serves the Messages and Models APIs on 127.0.0.1, answering each model call with the next scripted step.\n' +
    `A script is ${SCRIPT_FORMAT}.\n` +
    'Summaries, memory and session titles are answered without using a step; once the steps run out every call\n' +
    'gets a reply saying so. Point an agent at it with the two variables it prints. Stops on Ctrl-C.',
  connects: false,
  options: {
    port: { type: 'string', value: '<n>', help: 'port (0: any free one)', default: '8787' },
    script: { type: 'string', value: '<file>', help: 'JSON file of steps' },
    say: { type: 'string', multiple: true, value: '<text>', help: 'a reply (repeatable; after the --script steps)' },
  },
  examples: [
    'fh fake --say "Hello from the fake."',
    'fh fake --script steps.json --port 8787',
    `ANTHROPIC_BASE_URL=http://127.0.0.1:8787 ANTHROPIC_API_KEY=fake node agent.js   # in another terminal`,
  ],
  run: (p, io) => runFake(p, io),
};

async function runFake(p: Parsed, io: Io = stdio): Promise<number> {
  if (p.positionals.length > 0) throw usage(`unexpected argument '${p.positionals[0]}' (fh fake takes only options)`);
  const port = int(p, 'port', 8787, 0);
  if (port > 65535) throw usage('--port must be between 0 and 65535');
  const file = str(p, 'script');
  const { FakeAnthropicServer, say } = require('../../testing/fake-anthropic') as typeof import('../../testing/fake-anthropic'); // eslint-disable-line @typescript-eslint/no-require-imports
  const steps = [...(file ? await readScriptFile(file) : []), ...strs(p, 'say').map((t) => say(t))];
  let fake: Awaited<ReturnType<typeof FakeAnthropicServer.start>> | undefined;
  fake = await FakeAnthropicServer.start({ port, script: steps, route: sideRequestRoute(() => fake?.remaining() ?? 0) });
  io.out(
    [
      `Scripted fake Anthropic server (NOT a model) at ${fake.url}, ${steps.length} scripted step${steps.length === 1 ? '' : 's'}`,
      'Point your agent at it:',
      `  export ANTHROPIC_BASE_URL=${fake.url} ANTHROPIC_API_KEY=fake`,
      'Press Ctrl-C to stop.',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  io.err(`[fh fake] stopping; ${fake.messageRequests().length} model call(s) answered, ${fake.remaining()} step(s) unused`);
  await fake.stop();
  return 0;
}
