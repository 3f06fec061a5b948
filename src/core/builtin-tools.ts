import { z } from 'zod';
import type { ToolDefinition } from './tools';
import { lazySchema } from './lazy-schema';

/**
 * The local-sandbox tools, declared here without code: their schemas are pure, so workflow code can
 * show them to the model; their implementations live in `activities/tools/local-tools.ts` (Node only).
 */
function builtin<S extends z.ZodType>(
  name: string,
  description: string,
  input: S,
  opts: { readOnly?: boolean } = {},
): ToolDefinition<z.infer<S>> {
  return { kind: 'tool', name, description, input: input as z.ZodType<z.infer<S>>, ...(opts.readOnly ? { readOnly: true } : {}) };
}

export const bashInput = lazySchema(() => z.object({
  command: z.string().min(1).describe('The shell command to run (bash -c).'),
  timeoutMs: z.number().int().positive().max(600_000).optional().describe('Kill the command after this long.'),
}));
export const readFileInput = lazySchema(() => z.object({ path: z.string().min(1).describe('File path, relative to the sandbox directory.') }));
export const writeFileInput = lazySchema(() => z.object({
  path: z.string().min(1).describe('File path, relative to the sandbox directory.'),
  content: z.string().describe('The whole new content of the file.'),
}));
export const editFileInput = lazySchema(() => z.object({
  path: z.string().min(1),
  old_string: z.string().min(1).describe('Exact text to replace; it must occur exactly once.'),
  new_string: z.string().describe('Replacement text.'),
}));

/** Input of read_artifact (and of read_tool_result, its 0.3.0 name). */
export const readArtifactInput = lazySchema(() => z.object({
  ref: z.string().regex(/^[0-9a-f]{64}$/, 'must be the 64-hex ref an artifact reference or a truncation marker names').describe('The ref in the [artifact …] reference or the [full output: read_artifact(…)] marker.'),
  offset: z.number().int().nonnegative().optional().describe('First character to read (default 0).'),
  maxChars: z.number().int().positive().max(50_000).optional().describe('How much to read (default 20,000).'),
}));

export const builtinTools = {
  bash: builtin('bash', 'Run a shell command in the sandbox directory and return its exit code, stdout and stderr.', bashInput),
  read_file: builtin('read_file', 'Read a text file from the sandbox directory.', readFileInput, { readOnly: true }),
  write_file: builtin('write_file', 'Create or overwrite a text file in the sandbox directory.', writeFileInput),
  edit_file: builtin(
    'edit_file',
    'Replace one exact occurrence of old_string with new_string in a file of the sandbox directory.',
    editFileInput,
  ),
  read_artifact: builtin(
    'read_artifact',
    'Read a stored tool output (an [artifact …] reference, or a result truncated in the conversation) by its ref, a page at a time.',
    readArtifactInput,
    { readOnly: true },
  ),
} as const;

export type BuiltinToolName = keyof typeof builtinTools;

export function isBuiltinToolName(name: string): name is BuiltinToolName {
  return Object.prototype.hasOwnProperty.call(builtinTools, name);
}
