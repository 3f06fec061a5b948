import { isBuiltinToolName } from '../../core/builtin-tools';
import { ToolNotRegisteredError } from '../../core/errors';
import { toolOutputToText, type ToolContext, type ToolExecute } from '../../core/tools';
import { localToolImplementations, type LocalTools } from './local-tools';
import { SandboxUnavailableError } from './sandbox/sandbox';

export interface ToolRunOptions {
  where?: 'worker' | 'inline';
  /** The built-in tools' code (the worker's sandbox settings decide how bash runs). */
  local?: LocalTools;
  /** The tool's own bound: past it the call is aborted and answered with an error result. */
  timeoutMs?: number;
}

/**
 * Runs one tool call where tools run: the same code inline (this process) and on Temporal (the tool
 * activity). A tool that throws or passes its `timeoutMs` produces an error result for the model, not
 * a failed run: the model can read it and adapt. Cancellation (the run's, or the activity's) aborts the
 * tool's signal and fails the call.
 */
export async function runToolImplementation(
  code: ToolExecute | undefined,
  name: string,
  input: unknown,
  ctx: ToolContext,
  options: ToolRunOptions = {},
): Promise<{ content: string; isError: boolean }> {
  const { where = 'worker', local = localToolImplementations, timeoutMs } = options;
  const execute = code ?? (isBuiltinToolName(name) ? local[name] : undefined);
  // A deployment error, not the model's: it fails the call (non-retryable on Temporal), and the run.
  if (!execute) throw new ToolNotRegisteredError(name, where);
  const timeout = timeoutMs === undefined ? undefined : new AbortController();
  const signal = timeout ? AbortSignal.any([ctx.signal, timeout.signal]) : ctx.signal;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    if (!timeout) return;
    timer = setTimeout(() => {
      // Settle as timed out before aborting: a tool that rejects on abort must not win the race.
      reject(new ToolTimeoutError(name, timeoutMs!));
      timeout.abort();
    }, timeoutMs);
  });
  try {
    const output = await Promise.race([Promise.resolve(execute(input, { ...ctx, signal })), timedOut]);
    return { content: toolOutputToText(output), isError: false };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    // No confinement for bash here: a deployment error (fails the call), not something the model can fix.
    if (err instanceof SandboxUnavailableError) throw err;
    return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  } finally {
    clearTimeout(timer);
  }
}

class ToolTimeoutError extends Error {
  constructor(name: string, ms: number) {
    super(`tool '${name}' did not finish within its timeout of ${ms} ms and was aborted`);
  }
}
