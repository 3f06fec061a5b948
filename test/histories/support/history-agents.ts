/**
 * Agents that only the recorded histories need (no integration suite runs them): `masker` reads source
 * files with a tool under observation masking (compaction.toolResults.maskAfterEntries), so its history
 * records a `mask` decision (named apart from the integration suites' `masker`: agent names are one namespace per worker). Its settings are module constants: a recorded history must keep replaying
 * against this module as it stands, so change it only in ways that keep the workflow's commands.
 */
import { agent, schema, tool } from '@fabric-harness/sdk';

const source = (path: string) => Array.from({ length: 40 }, (_, l) => `${path} line ${l}: export const value${l} = ${l};`).join('\n');

export const readSource = tool({
  name: 'read_source',
  description: 'Read a source file.',
  input: schema.object({ path: schema.string() }),
  execute: ({ path }) => source(path),
});

export const runCommand = tool({
  name: 'run',
  description: 'Run a command.',
  input: schema.object({ command: schema.string() }),
  execute: () => 'PASS test/a.test.ts\nTests:       3 passed, 3 total',
});

export const masker = agent({
  name: 'history-masker',
  input: schema.object({ task: schema.string() }),
  run: async ({ init, input }) => {
    const fabric = await init({
      system: 'You read source code.',
      tools: [readSource, runCommand],
      contextWindowTokens: 100_000,
      compaction: { toolResults: { maskAfterEntries: 4 } },
    });
    const session = await fabric.session();
    const reply = await session.prompt<string>(input.task);
    return { reply, state: session.compactionState() };
  },
});
