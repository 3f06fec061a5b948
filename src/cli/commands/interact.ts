/** fh prompt, fh compact, fh close: talk to a running agent (workflow updates and a signal); fh terminate ends any run. */
import { promises as fs } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { terminateRun } from '../../client/terminate';
import { notServedReason } from '../../client/unknown-agent';
import { getAgentHandle, type AgentHandle } from '../../client';
import { RunWaitEndedError } from '../../client/run-updates';
import { flag, int, JSON_OPTION, str, type Parsed } from '../args';
import { asCliError, connect, printJson, type Command, type Io } from '../context';
import { EXIT, failure, oneLine, usage } from '../errors';

const SESSION_OPTION = { session: { type: 'string' as const, value: '<id>', help: 'session id (default: the first session)' } };

export const promptCommand: Command = {
  name: 'prompt',
  summary: 'send a prompt to a running agent and print its reply',
  usage: ['prompt <workflow-id> <text|@file|-> [--session <id>] [--id <key>] [--timeout 600]'],
  description:
    'Sends the text as a workflow update (fh.prompt): once accepted it is in the run\'s history. The agent answers it when its run ' +
    'calls harness.serve(), or between its own prompts. Waits for the reply.',
  connects: true,
  options: {
    ...SESSION_OPTION,
    id: {
      type: 'string',
      value: '<key>',
      help: 'idempotency key (the update id): sending again with the same key returns the first reply, the prompt runs once',
    },
    timeout: { type: 'string', value: '<seconds>', help: 'how long to wait for the reply', default: '600' },
    ...JSON_OPTION,
  },
  examples: ["fh prompt support-7 'And the refund policy?'", "fh prompt support-7 'Retry-safe question' --id q-2024-001", 'fh prompt support-7 @question.txt --session main'],
  run: (p, io) => runPrompt(p, io),
};

export const compactCommand: Command = {
  name: 'compact',
  summary: "compact a running agent's session now",
  usage: ['compact <workflow-id> [--keep <n>] [--no-summary] [--session <id>]'],
  description: 'Manual compaction through the workflow update fh.compact: it waits for a prompt in progress, and is recorded in history.',
  connects: true,
  options: {
    ...SESSION_OPTION,
    keep: { type: 'string', value: '<n>', help: 'recent entries to keep verbatim (default: the session setting)' },
    'no-summary': { type: 'boolean', help: 'use the deterministic summary instead of asking the model' },
    ...JSON_OPTION,
  },
  examples: ['fh compact support-7', 'fh compact support-7 --keep 6 --no-summary'],
  run: (p, io) => runCompact(p, io),
};

export const closeCommand: Command = {
  name: 'close',
  summary: 'tell a serving agent to finish once prompts in flight are answered',
  usage: ['close <workflow-id>'],
  description:
    'Signals fh.close: harness.serve() returns and the run goes on to its end. A run no worker serves (its workflow task keeps\n' +
    'failing, e.g. an agent no worker has, or no worker polls its task queue) would never act on it: nothing is sent, it says\n' +
    'why and exits 1 (end such a run with `fh terminate <id>`).',
  connects: true,
  options: {},
  examples: ['fh close support-7'],
  run: (p, io) => runClose(p, io),
};

export const terminateCommand: Command = {
  name: 'terminate',
  summary: 'end a run now (Temporal terminate), e.g. one no worker can serve',
  usage: ['terminate <workflow-id> [--reason <text>]'],
  description:
    'Terminates the run\'s current execution: it stops at once, nothing of it runs again, and the reason is in its history.\n' +
    'For a run that cannot end by itself (an agent no worker has, a task that keeps failing); a serving agent ends cleanly\n' +
    'with `fh close`. An unknown id exits 3 [RUN_NOT_FOUND], a run that has ended already 1 [RUN_CLOSED].',
  connects: true,
  options: { reason: { type: 'string', value: '<text>', help: 'why (recorded in the run\'s history)', default: 'terminated with fh terminate' }, ...JSON_OPTION },
  examples: ['fh terminate calc-7', "fh terminate calc-7 --reason 'misspelt agent name'"],
  run: (p, io) => runTerminate(p, io),
};

/** What each command asks of a run, for the message when the run has ended. */
const TAKES: Record<string, string> = { prompt: 'prompts', compact: 'compactions', close: 'a close request' };

async function withHandle(p: Parsed, command: string, fn: (handle: AgentHandle, workflowId: string) => Promise<number>): Promise<number> {
  const workflowId = p.positionals[0];
  if (!workflowId) throw usage(`fh ${command} needs a workflow id (find one with \`fh list\`)`);
  const conn = await connect(p);
  try {
    const handle = getAgentHandle(conn.client, workflowId);
    try {
      // An unknown id is a clear "not found", and an ended run a clear "it has ended", before anything is sent.
      const status = (await handle.workflow.describe()).status.name;
      if (status !== 'RUNNING') {
        throw failure(
          `run ${workflowId} has ended (${status}): it takes no more ${TAKES[command] ?? 'requests'}; \`fh history ${workflowId}\` shows what it did`,
        );
      }
      return await fn(handle, workflowId);
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) throw failure(`the run rejected it: ${oneLine(err.cause?.message ?? err.message)}`);
      throw asCliError(err, { settings: conn.settings, workflowId });
    }
  } finally {
    await conn.close();
  }
}

async function readText(spec: string): Promise<string> {
  if (spec === '-') {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  return spec.startsWith('@') ? fs.readFile(spec.slice(1), 'utf8') : spec;
}

async function runPrompt(p: Parsed, io: Io): Promise<number> {
  const [, spec, ...extra] = p.positionals;
  if (spec === undefined) throw usage('fh prompt needs the text: fh prompt <workflow-id> <text|@file|->');
  if (extra.length > 0) throw usage(`unexpected argument '${extra[0]}' (quote the prompt)`);
  const text = await readText(spec);
  if (!text.trim()) throw usage('the prompt is empty');
  const timeoutMs = int(p, 'timeout', 600, 1) * 1000;
  return withHandle(p, 'prompt', async (handle) => {
    const sessionId = str(p, 'session');
    // Always a known update id: a wait that ends can name it, and a retry with it reattaches (never a second prompt).
    const updateId = str(p, 'id') ?? randomUUID();
    let reply: string;
    try {
      // Temporal dedupes updates by id, so a retry with the same key gets the first reply.
      reply = await handle.prompt(text, { ...(sessionId ? { conversationId: sessionId } : {}), updateId, timeoutMs });
    } catch (err) {
      if (!(err instanceof RunWaitEndedError)) throw err;
      const idle = err.noWorker;
      throw failure(
        `no reply within ${timeoutMs / 1000} s` +
          (idle ? `: no worker is polling task queue ${idle.taskQueue} (start one with \`fh worker --agents <module> --task-queue ${idle.taskQueue}\`)` : '') +
          `; the prompt stays in the run and is answered once a worker takes it: wait for it with the same key (--id ${updateId}), sending it without --id would run it twice`,
      );
    }
    if (flag(p, 'json')) printJson(io, { reply });
    else io.out(reply);
    return EXIT.OK;
  });
}

async function runCompact(p: Parsed, io: Io): Promise<number> {
  if (p.positionals.length > 1) throw usage(`unexpected argument '${p.positionals[1]}'`);
  const keep = str(p, 'keep') !== undefined ? int(p, 'keep', 20, 1) : undefined;
  return withHandle(p, 'compact', async (handle, workflowId) => {
    const result = await handle.compact({ sessionId: str(p, 'session'), keepRecentEntries: keep, generateSummary: !flag(p, 'no-summary') });
    if (flag(p, 'json')) printJson(io, result);
    else if (result.compactedEntries === 0) io.out(`${workflowId}: nothing to compact (the session is within its keep-recent window)`);
    else io.out(`${workflowId}: compacted ${result.compactedEntries} entries into a summary:\n\n${result.summary}`);
    return EXIT.OK;
  });
}

async function runClose(p: Parsed, io: Io): Promise<number> {
  if (p.positionals.length > 1) throw usage(`unexpected argument '${p.positionals[1]}'`);
  return withHandle(p, 'close', async (handle, workflowId) => {
    // A close request only acts through a worker running the run: with none that can, saying "asked" would mislead.
    const notServed = await notServedReason(handle.workflow);
    if (notServed) throw failure(`run ${workflowId} is not being served: ${notServed}; a close request would never be acted on (nothing was sent). End it with \`fh terminate ${workflowId}\``);
    await handle.close();
    io.out(`${workflowId}: asked to close; \`fh history ${workflowId}\` shows the run`);
    return EXIT.OK;
  });
}

async function runTerminate(p: Parsed, io: Io): Promise<number> {
  const [workflowId, ...extra] = p.positionals;
  if (!workflowId) throw usage('fh terminate needs a workflow id (find one with `fh list`)');
  if (extra.length > 0) throw usage(`unexpected argument '${extra[0]}' (quote the --reason text)`);
  const reason = str(p, 'reason') ?? 'terminated with fh terminate';
  const conn = await connect(p);
  try {
    const { runId } = await terminateRun(conn.client, workflowId, reason).catch((err: unknown) => {
      throw asCliError(err, { settings: conn.settings, workflowId });
    });
    if (flag(p, 'json')) printJson(io, { workflowId, runId, status: 'TERMINATED', reason });
    else io.out(`${workflowId}: terminated (${reason}); \`fh history ${workflowId}\` shows the run`);
    return EXIT.OK;
  } finally {
    await conn.close();
  }
}
