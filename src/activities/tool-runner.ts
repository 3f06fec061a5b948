import { isBuiltinToolName } from '../core/builtin-tools';
import { ToolNotRegisteredError } from '../core/errors';
import { toolOutputToText, type ToolContext, type ToolExecute } from '../core/tools';
import { localToolImplementations, type LocalTools } from './local-tools';

/**
 * Runs one tool call where tools run (inline: this process; Temporal: the tool activity). A tool that
 * throws produces an error result for the model, not a failed run: the model can read it and adapt.
 */
export async function runToolImplementation(
  code: ToolExecute | undefined,
  name: string,
  input: unknown,
  ctx: ToolContext,
  where: 'worker' | 'inline' = 'worker',
  /** The built-in tools' code (the worker's sandbox settings decide how bash runs). */
  local: LocalTools = localToolImplementations,
): Promise<{ content: string; isError: boolean }> {
  const execute = code ?? (isBuiltinToolName(name) ? local[name] : undefined);
  // A deployment error, not the model's: it fails the call (non-retryable on Temporal), and the run.
  if (!execute) throw new ToolNotRegisteredError(name, where);
  try {
    return { content: toolOutputToText(await execute(input, ctx)), isError: false };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}
