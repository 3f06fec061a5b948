// The demo's agent: a small engineering task in a sandbox directory, with the built-in tools.
const { agent, schema } = require('@fabric-harness/sdk');

exports.notesKeeper = agent({
  name: 'notes-keeper',
  description: 'Writes, checks and fixes a small notes file in its sandbox directory.',
  input: schema.object({ task: schema.string(), dir: schema.string() }),
  run: async ({ init, input }) => {
    const fabric = await init({
      system: 'You are a careful engineer. Work only in the sandbox directory, using the tools. Be brief.',
      tools: ['write_file', 'bash', 'edit_file', 'read_file'],
      sandbox: { type: 'local', cwd: input.dir },
    });
    const session = await fabric.session();
    const reply = await session.prompt(input.task);
    return { reply, usage: session.usage() };
  },
});
