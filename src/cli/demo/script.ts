/**
 * The demo's agent and what the scripted fake answers when no ANTHROPIC_API_KEY is set. The agent is
 * plain JavaScript written next to a link to this package at run time: the worker loads agent modules
 * from files and bundles them as workflow code, and this package ships no agent module of its own.
 */
import { callTools, say, type FakeStep } from '../../testing/anthropic/fake-anthropic';

export const DEMO_AGENT = 'notes-keeper';

export const DEMO_AGENT_MODULE = `// The demo's agent: a small engineering task in a sandbox directory, with the built-in tools.
const { agent, schema } = require('@fabric-harness/sdk');

exports.notesKeeper = agent({
  name: ${JSON.stringify(DEMO_AGENT)},
  description: 'Writes, checks and fixes a small notes file in its sandbox directory.',
  // bash: false where this machine cannot confine it (no bubblewrap, no sandbox-exec): the file tools only.
  // connection and model: the worker's model connection the run names (fh demo --provider openai), and a model in it.
  input: schema.object({ task: schema.string(), dir: schema.string(), bash: schema.boolean(), connection: schema.string().optional(), model: schema.string().optional() }),
  run: async ({ init, input }) => {
    const fabric = await init({
      system: 'You are a careful engineer. Work only in the sandbox directory, using the tools. Be brief.',
      tools: input.bash ? ['write_file', 'bash', 'edit_file', 'read_file'] : ['write_file', 'edit_file', 'read_file'],
      sandbox: { type: 'local', cwd: input.dir },
      ...(input.connection ? { connection: input.connection } : {}),
      ...(input.model ? { model: input.model } : {}),
    });
    const session = await fabric.session();
    const reply = await session.prompt(input.task);
    return { reply, usage: session.usage() };
  },
});
`;

/** The task; without bash (no confinement here) it skips counting the lines. */
export const demoTask = (bash = true): string =>
  'Create notes.md with three bullet points on why durable execution matters for agents, ' +
  (bash ? 'count its lines with bash, ' : '') +
  'fix the typo "reliabel" with edit_file, then read the file back and report.';

/** One canned reply per model call, in order (the bash step only when bash is there). */
export const demoScript = (bash = true): FakeStep[] => [
  callTools({
    name: 'write_file',
    input: {
      path: 'notes.md',
      content:
        '# Durable agents\n- A crash mid-task resumes where it stopped, not from scratch\n- Every model and tool call is recorded, so runs are reliabel and auditable\n- Long sessions survive deploys and restarts\n',
    },
  }),
  ...(bash ? [callTools({ name: 'bash', input: { command: 'wc -l notes.md' } })] : []),
  callTools({ name: 'edit_file', input: { path: 'notes.md', old_string: 'reliabel', new_string: 'reliable' } }),
  callTools({ name: 'read_file', input: { path: 'notes.md' } }),
  say(`notes.md has a heading and three bullet points${bash ? ' (4 lines)' : ''}; I fixed "reliabel" → "reliable" and read it back to confirm.`),
];
