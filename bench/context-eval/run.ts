/**
 * The simulated session loop: replays a scripted session call by call under one strategy. Before each
 * model call (each scripted assistant entry) the strategy manages the history kept so far and says what
 * the call sends; the scripted reply and tool results are then appended. Sums the estimated tokens every
 * call sends, and scores what the model would see at the next call. Deterministic (no model, no clock).
 */
import type { Entry } from '../../src/core/entries';
import { resolveCompactionSettings, type ResolvedCompactionSettings } from '../../src/core/context/settings';
import { estimateContextTokens } from '../../src/core/tokens';
import type { ToolSpec } from '../../src/core/tools-spec';
import { InvalidEvalOptionsError } from './errors';
import { survival, type Survival } from './score';
import type { ScriptedSession } from './session';
import { makeStrategy, STRATEGIES, type StrategyName } from './strategies';

export const EVAL_CONTEXT_WINDOW_TOKENS = 50_000;

export const EVAL_SYSTEM_PROMPT =
  'You are a careful coding agent working in a TypeScript repository. Use the tools to read, change and test code. Follow every standing instruction the user gives.';

/** The coding tools the scripted session calls. */
export const EVAL_TOOLS: readonly ToolSpec[] = [
  { name: 'read_file', description: 'Read a file of the repository.', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'write_file', description: 'Write a whole file.', input_schema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] } },
  { name: 'edit_file', description: 'Replace one exact string in a file.', input_schema: { type: 'object', properties: { path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' } }, required: ['path', 'old_string', 'new_string'] } },
  { name: 'bash', description: 'Run a shell command in the repository.', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
];

export interface EvalOptions {
  contextWindowTokens?: number;
  /** Resolved compaction settings; default: the SDK defaults for the window (threshold = window - reserve). */
  settings?: ResolvedCompactionSettings;
}

export interface StrategyReport {
  strategy: StrategyName;
  modelCalls: number;
  /** Estimated input tokens over all model calls (what each call would send, summed). */
  tokensSent: number;
  /** The largest single request. */
  peakTokens: number;
  /** Calls whose request is larger than the context window (the API would refuse them). */
  callsOverWindow: number;
  compactions: number;
  /** Input a real summariser would have been sent for those compactions (not in tokensSent). */
  summarizerInputTokens: number;
  survival: Survival;
  /** What the model would be sent at the next call: what survival scores. */
  finalView: Entry[];
}

export function evalSettings(options: EvalOptions = {}): ResolvedCompactionSettings {
  const window = options.contextWindowTokens ?? EVAL_CONTEXT_WINDOW_TOKENS;
  if (!Number.isInteger(window) || window <= 0) throw new InvalidEvalOptionsError('contextWindowTokens', `must be a positive integer, got ${window}`);
  return options.settings ?? resolveCompactionSettings(undefined, undefined, window, { enabled: true });
}

export async function runStrategy(session: ScriptedSession, name: StrategyName, options: EvalOptions = {}): Promise<StrategyReport> {
  if (!STRATEGIES.includes(name)) throw new InvalidEvalOptionsError('strategy', `must be one of ${STRATEGIES.join(', ')}, got ${String(name)}`);
  const settings = evalSettings(options);
  const ctx = { settings, system: EVAL_SYSTEM_PROMPT, tools: EVAL_TOOLS };
  const strategy = makeStrategy(name, ctx);
  const measure = (entries: readonly Entry[]) => estimateContextTokens({ system: ctx.system, tools: ctx.tools, entries }).total;
  let history: Entry[] = [];
  let modelCalls = 0;
  let tokensSent = 0;
  let peakTokens = 0;
  let callsOverWindow = 0;
  let compactions = 0;
  let summarizerInputTokens = 0;
  for (const entry of session.entries) {
    if (entry.type === 'assistant') {
      const plan = await strategy.beforeCall(history);
      history = plan.history;
      const sent = measure(plan.sent);
      modelCalls += 1;
      tokensSent += sent;
      peakTokens = Math.max(peakTokens, sent);
      if (sent > settings.contextWindowTokens) callsOverWindow += 1;
      if (plan.compacted) compactions += 1;
      summarizerInputTokens += plan.summarizerInputTokens;
    }
    history = [...history, entry];
  }
  // The view at the next call is what the model would work from: that is what is scored.
  const next = await strategy.beforeCall(history);
  if (next.compacted) compactions += 1;
  summarizerInputTokens += next.summarizerInputTokens;
  return {
    strategy: name,
    modelCalls,
    tokensSent,
    peakTokens,
    callsOverWindow,
    compactions,
    summarizerInputTokens,
    survival: survival(next.sent, session.truth),
    finalView: next.sent,
  };
}

/** Every strategy over the same session, in the order of STRATEGIES. */
export async function compareStrategies(session: ScriptedSession, options: EvalOptions = {}): Promise<StrategyReport[]> {
  const out: StrategyReport[] = [];
  for (const name of STRATEGIES) out.push(await runStrategy(session, name, options));
  return out;
}
