/**
 * `fh fake`: the scripted fake Anthropic server (the one the SDK's tests use) on a port, for running
 * one's own agents without an API key. It replays the steps it is given; it is not a model.
 */
import { flag, int, str, strs, type Parsed } from '../args';
import { stdio, type Command, type Io } from '../context';
import { usage } from '../errors';
import { readScriptFile, SCRIPT_FORMAT, sideRequestRoute } from '../fake-script';
import type { FakeRoute, FakeStep } from '../../testing/anthropic/fake-anthropic-script';

export const fakeCommand: Command = {
  name: 'fake',
  summary: 'run the scripted fake Anthropic server (not a model) for agents without an API key',
  usage: ['fake [--port 8787] [--provider anthropic|google] [--script steps.json] [--say <text>]… [--loop]'],
  description:
    'Serves the Messages and Models APIs on 127.0.0.1, answering each model call with the next scripted step.\n' +
    'With --provider google it serves the Gemini API instead (generateContent, streamGenerateContent, countTokens).\n' +
    `A script is ${SCRIPT_FORMAT}.\n` +
    'Summaries, memory and session titles are answered without using a step; once the steps run out every call\n' +
    'gets a reply saying so (with --loop the script starts over instead). SIGHUP resets it: the --script file is\n' +
    'read again and played from its first step (kill -HUP <pid>). Point an agent at it with the two variables it\n' +
    'prints. Stops on Ctrl-C.',
  connects: false,
  options: {
    port: { type: 'string', value: '<n>', help: 'port (0: any free one)', default: '8787' },
    script: { type: 'string', value: '<file>', help: 'JSON file of steps' },
    say: { type: 'string', multiple: true, value: '<text>', help: 'a reply (repeatable; after the --script steps)' },
    loop: { type: 'boolean', help: 'start the script over when its steps run out' },
    provider: { type: 'string', value: '<name>', help: 'the protocol served: anthropic (default) or google (Gemini)', default: 'anthropic' },
  },
  examples: [
    'fh fake --say "Hello from the fake."',
    'fh fake --script steps.json --port 8787',
    'fh fake --script steps.json --loop          # every run of the agent plays the same steps',
    `ANTHROPIC_BASE_URL=http://127.0.0.1:8787 ANTHROPIC_API_KEY=fake node agent.js   # in another terminal`,
    'fh fake --provider google --say "Hello from the fake Gemini."',
  ],
  run: (p, io) => runFake(p, io),
};

async function runFake(p: Parsed, io: Io = stdio): Promise<number> {
  if (p.positionals.length > 0) throw usage(`unexpected argument '${p.positionals[0]}' (fh fake takes only options)`);
  const port = int(p, 'port', 8787, 0);
  if (port > 65535) throw usage('--port must be between 0 and 65535');
  const file = str(p, 'script');
  const provider = str(p, 'provider') ?? 'anthropic';
  if (provider !== 'anthropic' && provider !== 'google') throw usage(`--provider must be anthropic or google, not '${provider}'`);
  const { say } = require('../../testing/anthropic/fake-anthropic-script') as typeof import('../../testing/anthropic/fake-anthropic-script'); // eslint-disable-line @typescript-eslint/no-require-imports
  const readSteps = async () => [...(file ? await readScriptFile(file) : []), ...strs(p, 'say').map((t) => say(t))];
  const steps = await readSteps();
  let fake: ScriptedFake | undefined;
  const refill = flag(p, 'loop') && steps.length > 0 ? () => fake?.enqueue(...steps) : undefined;
  const route = sideRequestRoute(() => fake?.remaining() ?? 0, refill);
  fake = await startScriptedFake(provider, { port, script: steps, route });
  const google = provider === 'google';
  io.out(
    [
      `Scripted fake ${google ? 'Gemini' : 'Anthropic'} server (NOT a model) at ${fake.url}, ${steps.length} scripted step${steps.length === 1 ? '' : 's'}${refill ? ', looping' : ''}`,
      'Point your agent at it:',
      google ? `  export GOOGLE_GEMINI_BASE_URL=${fake.url} GEMINI_API_KEY=fake` : `  export ANTHROPIC_BASE_URL=${fake.url} ANTHROPIC_API_KEY=fake`,
      `Press Ctrl-C to stop; kill -HUP ${process.pid} starts the script over.`,
    ].join('\n'),
  );
  const reset = (): void => {
    void readSteps().then(
      (fresh) => {
        steps.splice(0, steps.length, ...fresh);
        fake?.replaceScript(fresh);
        io.err(`[fh fake] script reset: ${fresh.length} step(s) from the start`);
      },
      (err: Error) => io.err(`[fh fake] script not reset, the old one plays on: ${err.message}`),
    );
  };
  process.on('SIGHUP', reset);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  process.off('SIGHUP', reset);
  io.err(`[fh fake] stopping; ${fake.answered()} model call(s) answered, ${fake.remaining()} step(s) unused`);
  await fake.stop();
  return 0;
}

/** What `fh fake` needs of either fake server. */
interface ScriptedFake {
  url: string;
  enqueue(...steps: FakeStep[]): void;
  remaining(): number;
  replaceScript(steps: FakeStep[]): void;
  answered(): number;
  stop(): Promise<void>;
}

/** The fake for the protocol asked for, loaded only then (the CLI does not load the testing module otherwise). */
async function startScriptedFake(provider: 'anthropic' | 'google', opts: { port: number; script: FakeStep[]; route: FakeRoute }): Promise<ScriptedFake> {
  if (provider === 'google') {
    const { FakeGeminiServer } = require('../../testing/gemini/fake-gemini') as typeof import('../../testing/gemini/fake-gemini'); // eslint-disable-line @typescript-eslint/no-require-imports
    const fake = await FakeGeminiServer.start(opts);
    return Object.assign(fake, { answered: () => fake.generateRequests().length });
  }
  const { FakeAnthropicServer } = require('../../testing/anthropic/fake-anthropic') as typeof import('../../testing/anthropic/fake-anthropic'); // eslint-disable-line @typescript-eslint/no-require-imports
  const fake = await FakeAnthropicServer.start(opts);
  return Object.assign(fake, { answered: () => fake.messageRequests().length });
}
