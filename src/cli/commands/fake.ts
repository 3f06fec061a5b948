/**
 * `fh fake`: a scripted fake model server (the ones the SDK's tests use) on a port, for running one's
 * own agents without an API key: Anthropic's Messages API, or with `--provider` OpenAI's Responses or
 * Chat Completions API. It replays the steps it is given; it is not a model.
 */
import { flag, int, str, strs, type Parsed } from '../args';
import { stdio, type Command, type Io } from '../context';
import { usage } from '../errors';
import { nextStopSignal } from '../stop-signals';
import { readScriptFile, SCRIPT_FORMAT, sideRequestRoute } from '../fake-script';
import { FAKE_PROVIDERS, startFake, type FakeProvider, type RunningFake } from '../fake-servers';
import { plural } from '../../core/plural';

export const fakeCommand: Command = {
  name: 'fake',
  summary: 'run a scripted fake model server (not a model: Anthropic, OpenAI, Gemini) for agents without an API key',
  usage: ['fake [--provider anthropic|openai|openai-chat|google] [--port 8787] [--script steps.json] [--say <text>]… [--loop]'],
  description:
    "Serves the provider's model and models APIs on 127.0.0.1, answering each model call with the next scripted step:\n" +
    "Anthropic's Messages API (default), OpenAI's Responses API (--provider openai) or its Chat Completions API\n" +
    '(--provider openai-chat, as OpenAI-compatible servers speak it), or the Gemini API (--provider google:\n' +
    'generateContent, streamGenerateContent, countTokens).\n' +
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
    provider: { type: 'string', value: '<name>', help: 'the protocol served: anthropic (default), openai (Responses), openai-chat (Chat Completions) or google (Gemini)', default: 'anthropic' },
  },
  examples: [
    'fh fake --say "Hello from the fake."',
    'fh fake --script steps.json --port 8787',
    'fh fake --script steps.json --loop          # every run of the agent plays the same steps',
    `ANTHROPIC_BASE_URL=http://127.0.0.1:8787 ANTHROPIC_API_KEY=fake node agent.js   # in another terminal`,
    'fh fake --provider openai --say "Hello from the fake Responses API."',
  ],
  run: (p, io) => runFake(p, io),
};

async function runFake(p: Parsed, io: Io = stdio): Promise<number> {
  if (p.positionals.length > 0) throw usage(`unexpected argument '${p.positionals[0]}' (fh fake takes only options)`);
  const port = int(p, 'port', 8787, 0);
  if (port > 65535) throw usage('--port must be between 0 and 65535');
  const file = str(p, 'script');
  const provider = str(p, 'provider') ?? 'anthropic';
  if (!FAKE_PROVIDERS.includes(provider as FakeProvider)) throw usage(`--provider must be one of ${FAKE_PROVIDERS.join(', ')}, not '${provider}'`);
  const { say } = require('../../testing/anthropic/fake-anthropic-script') as typeof import('../../testing/anthropic/fake-anthropic-script'); // eslint-disable-line @typescript-eslint/no-require-imports
  const readSteps = async () => [...(file ? await readScriptFile(file) : []), ...strs(p, 'say').map((t) => say(t))];
  const steps = await readSteps();
  let fake: RunningFake | undefined;
  const refill = flag(p, 'loop') && steps.length > 0 ? () => fake?.enqueue(...steps) : undefined;
  fake = await startFake(provider as FakeProvider, { port, script: steps, route: sideRequestRoute(() => fake?.remaining() ?? 0, refill) });
  const reset = (): void => {
    void readSteps().then(
      (fresh) => {
        steps.splice(0, steps.length, ...fresh);
        fake?.replaceScript(fresh);
        io.err(`[fh fake] script reset: ${plural(fresh.length, 'step', 'steps')} from the start`);
      },
      (err: Error) => io.err(`[fh fake] script not reset, the old one plays on: ${err.message}`),
    );
  };
  process.on('SIGHUP', reset);
  // Both are handled before the prompt shows: a `kill -HUP` the moment it does resets, it does not kill.
  const stopped = nextStopSignal(['SIGINT', 'SIGTERM']);
  io.out(
    [
      `Scripted fake ${fake.name} server (NOT a model) at ${fake.url}, ${plural(steps.length, 'scripted step', 'scripted steps')}${refill ? ', looping' : ''}`,
      'Point your agent at it:',
      `  export ${fake.env}`,
      `Press Ctrl-C to stop; kill -HUP ${process.pid} starts the script over.`,
    ].join('\n'),
  );
  await stopped;
  process.off('SIGHUP', reset);
  io.err(`[fh fake] stopping; ${plural(fake.answered(), 'model call', 'model calls')} answered, ${plural(fake.remaining(), 'step', 'steps')} unused`);
  await fake.stop();
  return 0;
}
