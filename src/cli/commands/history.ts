/** fh history (audit transcript), fh history export, fh replay. */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { WorkflowBundle } from '@temporalio/worker';
import { auditTranscript } from '../../audit/index';
import { historyToJSONString, looksLikeFile, readHistoryFile, type History } from '../../audit/history-file';
import { bundleForReplay, replayHistory } from '../../audit/replay';
import { flag, int, JSON_OPTION, str, type Parsed } from '../args';
import { asCliError, connect, installRuntime, printJson, STORE_OPTION, storeFrom, type Command, type Io } from '../context';
import { EXIT, failure, notFound, usage } from '../errors';
import { agentModules } from './worker';
import { describeReset, findResetPoint, resetRun, type ResetPoint } from './replay-reset';
import { plural } from '../../core/plural';

export const historyCommand: Command = {
  name: 'history',
  summary: "print a run's audit transcript: model calls, tool calls, compaction decisions, user actions",
  usage: ['history <workflow-id|file> [--md | --json] [--truncate 400]', 'history export <workflow-id> <file>'],
  description:
    'Renders the run from its Temporal history alone (nothing is re-run): each model call (model, tokens, stop reason,\n' +
    'reply, tool calls asked for), each tool call (arguments, result), each compaction decision and summary, and\n' +
    'everything a user sent (input, signals, updates such as fh.compact), with timestamps. Markdown by default;\n' +
    '--json keeps every text in full. `history export` saves the history as Temporal proto-JSON (the format of\n' +
    '`temporal workflow show --output json`) for `fh replay` and for audits off the server.',
  connects: true,
  options: {
    md: { type: 'boolean', help: 'print Markdown (the default)' },
    ...JSON_OPTION,
    truncate: { type: 'string', value: '<n>', help: 'characters of a tool result or reply shown in Markdown', default: '400' },
    'run-id': { type: 'string', value: '<run-id>', help: 'a specific run (default: the latest)' },
    ...STORE_OPTION,
  },
  examples: [
    'fh history research-42',
    'fh history research-42 --json > audit.json',
    'fh history export research-42 research-42.json',
    'fh history research-42.json          # a saved history, no server needed',
  ],
  run: (p, io) => (p.positionals[0] === 'export' ? runExport(p, io) : runHistory(p, io)),
};

export const replayCommand: Command = {
  name: 'replay',
  summary: 'replay a run against the current agent code; non-zero exit on divergence',
  usage: ['replay <workflow-id|file> --agents <module> [--agents <module>…] [--strict-inputs]', 'replay <workflow-id> --agents <module> --reset [--dry-run] [--reason <text>]'],
  description:
    'Runs the recorded history through the workflow code bundled from --agents, without calling the model or any\n' +
    'tool, and reports whether the code makes the same decisions. On a divergence it names the event and what was\n' +
    'recorded versus what the code does now, and exits 1. Use it in CI before deploying agent changes.\n' +
    'A plain replay compares commands (which activities, timers, in which order), not what they are given: a changed\n' +
    'system prompt, tool definition, model or max_tokens still replays "ok". --strict-inputs also compares every\n' +
    "model call's input with the recorded one and names the first that differs, and in which field.\n" +
    '--reset repairs a run the code diverges from (a run that would fail every workflow task from now on): it resets\n' +
    'the run to the newest workflow task, at or before the divergence, whose history before it the current code\n' +
    'replays; a new run keeps that history and runs the current code from there, and every signal and update sent\n' +
    'after that point is applied again. Model and tool calls the old run made after that point run again: it names\n' +
    'them, and --dry-run prints the reset point and what would run again without resetting.',
  connects: true,
  options: {
    agents: { type: 'string', multiple: true, value: '<module>', help: 'module(s) with the current agent definitions', env: 'FH_AGENTS' },
    'strict-inputs': { type: 'boolean', help: 'also compare model-call inputs (model, max tokens, system prompt, tools, messages); exit 1 on a difference' },
    reset: { type: 'boolean', help: 'on a divergence, reset the run to the newest workflow task the current code replays (a new run on it)' },
    reason: { type: 'string', value: '<text>', help: "with --reset: the reason recorded in the run's history" },
    'dry-run': { type: 'boolean', help: 'with --reset: print where it would reset and what would run again; reset nothing' },
    ...JSON_OPTION,
    'run-id': { type: 'string', value: '<run-id>', help: 'a specific run (default: the latest)' },
    ...STORE_OPTION,
  },
  examples: [
    'fh replay research-42 --agents ./dist/agents.js',
    'fh replay research-42.json --agents ./dist/agents.js --json',
    'fh replay research-42.json --agents ./dist/agents.js --strict-inputs',
    'fh replay research-42 --agents ./dist/agents.js --reset --dry-run',
    'fh replay research-42 --agents ./dist/agents.js --reset --reason "deployed without patched()"',
    'for f in histories/*.json; do fh replay "$f" --agents ./dist/agents.js || exit 1; done',
  ],
  run: (p, io) => runReplay(p, io),
};

/** A history from a file, or fetched by workflow id (connecting only then). */
async function loadSource(p: Parsed, source: string): Promise<{ history: History; workflowId?: string; runId?: string; fromFile: boolean }> {
  if (looksLikeFile(source)) {
    try {
      return { history: await readHistoryFile(source), fromFile: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`history file ${source} not found`);
      throw asCliError(err);
    }
  }
  const conn = await connect(p);
  try {
    // The run read is named, so a reset applies to the run that was replayed, not to one started since.
    const runId = str(p, 'run-id') ?? (await conn.client.workflow.getHandle(source).describe()).runId;
    const history = (await conn.client.workflow.getHandle(source, runId).fetchHistory()) as History;
    return { history, workflowId: source, runId, fromFile: false };
  } catch (err) {
    throw asCliError(err, { settings: conn.settings, workflowId: source });
  } finally {
    await conn.close();
  }
}

async function runHistory(p: Parsed, io: Io): Promise<number> {
  const [source, ...extra] = p.positionals;
  if (!source) throw usage('fh history needs a workflow id or a history file: fh history <workflow-id|file> (find ids with `fh list`)');
  if (extra.length > 0) throw usage(`unexpected argument '${extra[0]}' (to save a history: fh history export <workflow-id> <file>)`);
  if (flag(p, 'json') && flag(p, 'md')) throw usage('--json and --md contradict each other: pick one');
  const truncateAt = int(p, 'truncate', 400, 10);
  const { history, workflowId } = await loadSource(p, source);
  const audit = await auditTranscript(history, { store: storeFrom(p), truncateAt, workflowId });
  if (flag(p, 'json')) printJson(io, audit.json);
  else io.out(audit.markdown);
  return EXIT.OK;
}

async function runExport(p: Parsed, io: Io): Promise<number> {
  const [, workflowId, file, ...extra] = p.positionals;
  if (!workflowId || !file) throw usage('fh history export needs a workflow id and a file: fh history export <workflow-id> <file>');
  if (extra.length > 0) throw usage(`unexpected argument '${extra[0]}'`);
  const { history } = await loadSource(p, workflowId);
  const target = path.resolve(file);
  try {
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, `${historyToJSONString(history)}\n`);
  } catch (err) {
    throw failure(`cannot write ${file}: ${(err as Error).message}`);
  }
  const events = history.events?.length ?? 0;
  if (flag(p, 'json')) printJson(io, { workflowId, file: target, events });
  else io.out(`wrote ${events} events of ${workflowId} to ${file}`);
  return EXIT.OK;
}

async function runReplay(p: Parsed, io: Io): Promise<number> {
  const [source, ...extra] = p.positionals;
  if (!source) throw usage('fh replay needs a workflow id or a history file: fh replay <workflow-id|file> --agents <module>');
  if (extra.length > 0) throw usage(`unexpected argument '${extra[0]}'`);
  const reset = flag(p, 'reset');
  if (!reset && str(p, 'reason') !== undefined) throw usage('--reason goes with --reset (the reason a reset records)');
  if (!reset && flag(p, 'dry-run')) throw usage('--dry-run goes with --reset (where it would reset, and what would run again)');
  if (reset && looksLikeFile(source)) throw usage('--reset resets a run on the server: give its workflow id, not a history file');
  if (reset && flag(p, 'strict-inputs')) throw usage('--reset repairs a run the code diverges from; --strict-inputs differences do not stop a run: use one or the other');
  const agents = agentModules(p, 'replay');
  for (const m of agents) {
    try {
      require.resolve(m);
    } catch {
      throw notFound(`agents module ${m} not found; check the --agents path`);
    }
  }
  const { history, workflowId, runId, fromFile } = await loadSource(p, source);
  installRuntime('ERROR');
  const strictInputs = flag(p, 'strict-inputs');
  let result;
  let workflowBundle;
  try {
    // Bundled once: a reset replays the history's prefixes with the same code.
    workflowBundle = await bundleForReplay(agents, { strictInputs });
    result = {
      ...(await replayHistory(history, { agents, workflowBundle, store: storeFrom(p), workflowId, strictInputs })),
      source: fromFile ? 'file' : 'workflow',
    };
  } catch (err) {
    throw failure(`cannot replay: ${(err as Error).message.split('\n')[0]}`);
  }
  const label = workflowId ?? source;
  const resetTo = reset && !result.ok ? await resetDiverged(p, { agents, workflowBundle }, result as { kind: string; eventId?: number }, history, workflowId!, runId!) : undefined;
  if (flag(p, 'json')) {
    printJson(io, resetTo ? { ...result, reset: resetTo } : result);
    return result.ok || resetTo ? EXIT.OK : EXIT.FAILURE;
  }
  if (result.ok) {
    const strict = result.strictInputs;
    const inputs = strict
      ? `, and sends the same inputs on ${plural(strict.compared, 'model call', 'model calls')}${strict.unreadable ? ` (${strict.unreadable} not compared: offloaded, pass --store-dir)` : ''}`
      : '';
    io.out(`ok: replayed ${result.events} events of ${label} against ${agents.map((a) => path.relative(process.cwd(), a) || a).join(', ')}: the current code makes the same decisions${inputs}${reset ? '; nothing to reset' : ''}`);
    return EXIT.OK;
  }
  const what =
    result.kind === 'nondeterminism'
      ? 'divergence'
      : result.kind === 'unknown_agent'
        ? 'wrong agents module'
        : result.kind === 'input_mismatch'
          ? `input mismatch (${result.inputMismatch?.field ?? '?'})`
          : 'replay failed';
  io.out(`${what}${result.eventId !== undefined ? ` at event ${result.eventId}` : ''} replaying ${label}: ${result.explanation}`);
  if (!resetTo) {
    // Resetting to a point is safe only for code that replays up to it; any other failure leaves the run as it is.
    if (reset) io.out(`not reset: --reset repairs a divergence (the code issues other commands than the run recorded), and this is not one; the run is unchanged`);
    return EXIT.FAILURE;
  }
  io.out(describeReset(label, resetTo, resetTo.runId));
  return EXIT.OK;
}

/** --reset: the run reset to the newest workflow task the current code replays; only a divergence is reset (other failures are not the code's commands). */
async function resetDiverged(
  p: Parsed,
  code: { agents: string[]; workflowBundle: WorkflowBundle },
  result: { kind: string; eventId?: number },
  history: History,
  workflowId: string,
  runId: string,
): Promise<(ResetPoint & ({ runId: string } | { runId?: undefined; dryRun: true })) | undefined> {
  if (result.kind !== 'nondeterminism') return undefined;
  const divergedAt = result.eventId ?? Number(history.events?.at(-1)?.eventId ?? 0) + 1;
  const { agents, workflowBundle } = code;
  const store = storeFrom(p);
  const replays = async (prefix: History) => (await replayHistory(prefix, { agents, workflowBundle, store, workflowId })).ok;
  const point = await findResetPoint(history, divergedAt, replays);
  if (!point) throw failure(`cannot reset ${workflowId}: the current code replays no workflow task of the run before the divergence; start a new run instead`);
  if (flag(p, 'dry-run')) return { ...point, dryRun: true };
  const conn = await connect(p);
  try {
    const reason = str(p, 'reason') ?? `fh replay --reset: the current code diverges${result.eventId !== undefined ? ` at event ${result.eventId}` : ''}`;
    return { ...point, runId: await resetRun(conn.client, workflowId, runId, point, reason) };
  } catch (err) {
    throw asCliError(err, { settings: conn.settings, workflowId });
  } finally {
    await conn.close();
  }
}
