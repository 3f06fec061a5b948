import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { Client, Connection } from '@temporalio/client';
import { describeFailure, failureLine } from '../../client/failures';
import { DEFAULT_TASK_QUEUE, startAgent } from '../../client/start';
import * as path from 'node:path';
import { parseAgentInput } from '../../core/agent';
import { InvalidInputError } from '../../core/errors';
import { flag, JSON_OPTION, str, strs, type Parsed } from '../args';
import { asCliError, connect, printJson, STORE_OPTION, type Command, type Io } from '../context';
import { CliError, EXIT, failure, notFound, oneLine, usage } from '../errors';
import { FH_SEARCH_ATTRIBUTES } from './server';
import { agentModules, loadAgents } from './worker';
import { unknownAgentTaskFailure } from '../../client/unknown-agent';
import { whatItWaitsFor } from '../waiting';

/** --agents of `fh run` and `fh session new`: with the modules at hand, the input is checked before anything starts. */
export const AGENTS_INPUT_OPTION = {
  type: 'string',
  multiple: true,
  value: '<module>',
  help: "module(s) with the agent definitions: the input is checked against the agent's schema before starting",
  env: 'FH_AGENTS',
} as const;

export const runCommand: Command = {
  name: 'run',
  summary: 'start an agent as a durable workflow and wait for its result',
  usage: ['run <agent> --input <json|@file|-> [--workflow-id <id>] [--task-queue <name>] [--no-wait]'],
  description:
    'Starts the agent named <agent> (its workflow type) with the input, on the task queue a `fh worker` serves, and\n' +
    'prints its result. With --no-wait it prints the workflow id and returns at once; the run goes on either way\n' +
    '(Ctrl-C only stops waiting). Inspect it with fh state / fh budget / fh history.',
  connects: true,
  options: {
    input: { type: 'string', short: 'i', value: '<json|@file|->', help: "the agent's input: JSON, @file with JSON, or - for stdin", default: '{}' },
    'workflow-id': { type: 'string', short: 'w', value: '<id>', help: 'workflow id', default: '<agent>-<time>-<random>' },
    'task-queue': { type: 'string', short: 'q', value: '<name>', help: 'task queue of the worker', default: DEFAULT_TASK_QUEUE },
    'no-wait': { type: 'boolean', help: 'print the workflow id and return without waiting for the result' },
    agents: AGENTS_INPUT_OPTION,
    ...JSON_OPTION,
    ...STORE_OPTION,
  },
  examples: [
    'fh run researcher --input \'{"task":"Summarise README.md"}\'',
    'fh run researcher --input @task.json --workflow-id research-42 --no-wait',
    'echo \'{"task":"hi"}\' | fh run researcher --input - --json',
  ],
  run: (p, io) => runRun(p, io),
};

/** The --input of `fh run` and `fh session new`: JSON, @file with JSON, or - for stdin ({} when not given). */
export async function readInput(spec: string | undefined): Promise<unknown> {
  if (spec === undefined) return {};
  let text = spec;
  let what = '--input';
  if (spec === '-') {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    text = Buffer.concat(chunks).toString('utf8');
    what = 'the input on stdin';
  } else if (spec.startsWith('@')) {
    const file = spec.slice(1);
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`input file ${file} not found`);
      throw failure(`cannot read input file ${file}: ${(err as Error).message}`);
    }
    what = `input file ${file}`;
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usage(`${what} is not JSON (${oneLine((err as Error).message)}); pass e.g. --input '{"task":"…"}' or --input @input.json`);
  }
}

/**
 * With the agent modules at hand (--agents or FH_AGENTS), bad input is a usage error naming the field
 * now, not a failed workflow later. Without them the worker checks it when the run starts.
 */
export function checkInput(p: Parsed, agent: string, input: unknown, command = 'run'): void {
  const given = strs(p, 'agents').length > 0 || Boolean(process.env.FH_AGENTS?.trim());
  if (!given) return;
  const files = agentModules(p, command);
  const agents = loadAgents(files);
  const def = agents.find((a) => a.name === agent);
  if (!def) {
    const names = agents.map((a) => a.name);
    throw usage(`agent '${agent}' is not defined in ${files.map((f) => path.relative(process.cwd(), f) || f).join(', ')} (agents there: ${names.join(', ') || 'none'})`);
  }
  try {
    parseAgentInput(def, input);
  } catch (err) {
    if (err instanceof InvalidInputError) {
      throw usage(`--input does not match the input schema of '${agent}': field '${err.field || '(root)'}': ${err.issues[0]?.message ?? err.message}`);
    }
    throw err;
  }
}

function defaultWorkflowId(agent: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z').replace('T', '-');
  return `${agent}-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** The FhAgent search attribute, when the namespace has it (fh server registers it); else nothing. */
async function agentSearchAttribute(client: Client, namespace: string, agent: string) {
  try {
    const res = await (client.connection as Connection).operatorService.listSearchAttributes({ namespace });
    if (!res.customAttributes || !('FhAgent' in res.customAttributes)) return undefined;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { defineSearchAttributeKey, SearchAttributeType } = require('@temporalio/common') as typeof import('@temporalio/common');
    return [{ key: defineSearchAttributeKey(Object.keys(FH_SEARCH_ATTRIBUTES)[0]!, SearchAttributeType.KEYWORD), value: agent }];
  } catch {
    return undefined; // not allowed to list them (cloud API keys), or an old server: skip the attribute
  }
}

async function runRun(p: Parsed, io: Io): Promise<number> {
  const [agent, ...extra] = p.positionals;
  if (!agent) throw usage('fh run needs the agent name: fh run <agent> --input <json>');
  if (extra.length > 0) throw usage(`unexpected argument '${extra[0]}' (quote the --input JSON for the shell)`);
  const input = await readInput(str(p, 'input'));
  checkInput(p, agent, input);
  const workflowId = str(p, 'workflow-id') ?? defaultWorkflowId(agent);
  const taskQueue = str(p, 'task-queue') ?? DEFAULT_TASK_QUEUE;
  const json = flag(p, 'json');

  const conn = await connect(p);
  const ctx = { settings: conn.settings, workflowId };
  try {
    const typedSearchAttributes = await agentSearchAttribute(conn.client, conn.settings.namespace, agent);
    let handle;
    try {
      handle = await startAgent(conn.client, agent, input, { workflowId, taskQueue, ...(typedSearchAttributes ? { typedSearchAttributes } : {}) });
    } catch (err) {
      if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') {
        throw failure(`a workflow with id '${workflowId}' already exists; choose another --workflow-id, or inspect it with \`fh state ${workflowId}\``);
      }
      throw asCliError(err, { settings: conn.settings });
    }
    const runId = (handle.workflow as { firstExecutionRunId?: string }).firstExecutionRunId;
    if (flag(p, 'no-wait')) {
      if (json) printJson(io, { workflowId, runId, agent, taskQueue, status: 'RUNNING' });
      else io.out(workflowId);
      return EXIT.OK;
    }
    if (!json) io.err(`[fh run] started ${agent} as workflow ${workflowId} on task queue '${taskQueue}'; waiting for the result (Ctrl-C stops waiting, the run goes on)`);
    // At 15 s, then every minute: what the run waits for (a worker, a model call, a serving agent, ...).
    const firstMs = Number(process.env.FH_RUN_HINT_MS) || 15_000; // FH_RUN_HINT_MS: sooner, for tests
    let waitedMs = 0;
    const say = () => {
      waitedMs += waitedMs === 0 ? firstMs : 60_000;
      const at = Math.round(waitedMs / 1000);
      void whatItWaitsFor(conn.client, conn.settings.namespace, workflowId, taskQueue).then(
        (line) => io.err(`[fh run] still waiting after ${at} s: ${line}`),
        () => undefined,
      );
      hint = setTimeout(say, 60_000);
      hint.unref();
    };
    let hint = setTimeout(say, firstMs);
    hint.unref();
    const watch = new AbortController();
    try {
      // A run of an agent no worker has stays open (a task failure Temporal retries): say so rather than wait in silence.
      const unknown = unknownAgentTaskFailure(handle.workflow, watch.signal).then((message) => {
        throw new CliError(EXIT.FAILURE, `run ${workflowId} is waiting for a worker that has agent '${agent}': ${oneLine(message)} [UNKNOWN_AGENT]; the run stays open (\`fh history ${workflowId}\`)`);
      });
      const result = await Promise.race([handle.result(), unknown]);
      if (json) printJson(io, { workflowId, runId, agent, status: 'COMPLETED', result });
      else io.out(typeof result === 'string' ? result : (JSON.stringify(result, null, 2) ?? 'undefined'));
      return EXIT.OK;
    } catch (err) {
      if (err instanceof CliError) throw err;
      if ((err as Error).name !== 'WorkflowFailedError') throw asCliError(err, ctx);
      // The top of the chain is often a generic wrapper ("Activity task failed"): print the typed cause.
      const failed = describeFailure(err);
      const detail = failureLine(failed);
      if (json) {
        printJson(io, { workflowId, runId, agent, status: 'FAILED', error: detail, failure: failed });
        return EXIT.FAILURE;
      }
      throw new CliError(EXIT.FAILURE, `run ${workflowId} failed: ${oneLine(detail)}; see \`fh history ${workflowId}\``);
    } finally {
      clearTimeout(hint);
      watch.abort();
    }
  } finally {
    await conn.close();
  }
}
