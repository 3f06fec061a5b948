import { isBuiltinToolName } from '../core/builtin-tools';
import { ToolNotRegisteredError } from '../core/errors';
import { toolOutputToText, type ToolContext, type ToolDefinition } from '../core/tools';
import { localToolImplementations, type LocalTools } from './local-tools';

/**
 * Runs one tool call where tools run (inline: this process; Temporal: the tool activity). A tool that
 * throws produces an error result for the model, not a failed run: the model can read it and adapt.
 */
export async function runToolImplementation(
  def: ToolDefinition | undefined,
  name: string,
  input: unknown,
  ctx: ToolContext,
  local: LocalTools = localToolImplementations,
): Promise<{ content: string; isError: boolean }> {
  const execute = def?.execute ?? (isBuiltinToolName(name) ? local[name] : undefined);
  if (!execute) throw new ToolNotRegisteredError(name);
  try {
    return { content: toolOutputToText(await execute(input, ctx)), isError: false };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}
