import type { z } from 'zod';
import type { bashInput, editFileInput, readFileInput, writeFileInput, BuiltinToolName } from '../../core/builtin-tools';
import type { ToolContext } from '../../core/tools';
import { confinedExistingPath, confinedNewPath, realRoot, requireSandboxDir } from './sandbox/sandbox-path';
import { openConfined } from './sandbox/sandbox-open';
import { confinedSpawn, killConfined } from './sandbox/sandbox';
import { defaultToolSandbox, type ToolSandbox } from './tool-env';

/**
 * Built-in local-sandbox tools. They run on this machine (the worker's, on Temporal) in the sandbox
 * directory. Failures the model can act on (missing file, ambiguous edit, non-zero exit) are returned
 * as results, not thrown: the model reads them and corrects itself.
 */
export class ToolFailure extends Error {}

const OUTPUT_CAP = 100_000;
const DEFAULT_BASH_TIMEOUT_MS = 120_000;

function cap(text: string, limit = OUTPUT_CAP): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}\n…[output truncated: ${text.length - limit} more characters]`;
}

export async function bash(input: z.infer<typeof bashInput>, ctx: ToolContext, sandbox: ToolSandbox = defaultToolSandbox): Promise<string> {
  const timeoutMs = input.timeoutMs ?? DEFAULT_BASH_TIMEOUT_MS;
  await requireSandboxDir(ctx.cwd); // spawn's own error for a missing cwd names bash, not the directory
  // Confined (sandbox.ts): bubblewrap by default, an explicit environment (the worker's own, with its
  // API keys and store settings, never reaches the tool). Throws SANDBOX_UNAVAILABLE rather than run unconfined.
  const child = confinedSpawn('bash', ['-c', input.command], {
    root: ctx.cwd,
    env: sandbox.env(ctx.cwd),
    network: sandbox.network,
    confinement: sandbox.confinement,
    signal: ctx.signal,
  });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killConfined(child);
    }, timeoutMs);
    const beat = setInterval(() => ctx.heartbeat({ stdoutBytes: stdout.length }), 5_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (stdout.length < OUTPUT_CAP * 2) stdout += d.toString();
      ctx.output?.('stdout', d.toString());
    });
    child.stderr!.on('data', (d: Buffer) => {
      if (stderr.length < OUTPUT_CAP * 2) stderr += d.toString();
      ctx.output?.('stderr', d.toString());
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      clearInterval(beat);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(beat);
      if (ctx.signal.aborted) return reject(new ToolFailure('cancelled'));
      const status = timedOut ? `timed out after ${timeoutMs} ms` : signal ? `killed by ${signal}` : `exit code ${code}`;
      resolve(`${status}\n--- stdout ---\n${cap(stdout)}\n--- stderr ---\n${cap(stderr)}`);
    });
  });
}

/**
 * Checks `requested` (sandbox-path.ts), then opens what was checked without following links on the way
 * (sandbox-open.ts): a directory swapped for a symlink in between makes the open fail, not escape.
 */
async function openChecked(ctx: ToolContext, requested: string, mode: 'read' | 'write' | 'edit') {
  const root = await realRoot(ctx.cwd);
  const checked = mode === 'write' ? await confinedNewPath(root, requested) : await confinedExistingPath(root, requested);
  return openConfined(root, checked, requested, mode);
}

export async function readFile(input: z.infer<typeof readFileInput>, ctx: ToolContext): Promise<string> {
  const file = await openChecked(ctx, input.path, 'read');
  try {
    return cap(await file.readFile('utf8'), 1_000_000);
  } finally {
    await file.close();
  }
}

export async function writeFile(input: z.infer<typeof writeFileInput>, ctx: ToolContext): Promise<string> {
  const file = await openChecked(ctx, input.path, 'write');
  try {
    await file.writeFile(input.content, 'utf8');
  } finally {
    await file.close();
  }
  return `wrote ${Buffer.byteLength(input.content)} bytes to ${input.path}`;
}

export async function editFile(input: z.infer<typeof editFileInput>, ctx: ToolContext): Promise<string> {
  const file = await openChecked(ctx, input.path, 'edit');
  try {
    const text = await file.readFile('utf8');
    const first = text.indexOf(input.old_string);
    if (first < 0) throw new ToolFailure(`old_string not found in ${input.path}`);
    if (text.indexOf(input.old_string, first + 1) >= 0) {
      throw new ToolFailure(`old_string occurs more than once in ${input.path}; include more context to make it unique`);
    }
    const edited = Buffer.from(text.slice(0, first) + input.new_string + text.slice(first + input.old_string.length), 'utf8');
    await file.truncate(0);
    await file.write(edited, 0, edited.length, 0);
  } finally {
    await file.close();
  }
  return `edited ${input.path}`;
}

export type LocalTools = Record<BuiltinToolName, (input: any, ctx: ToolContext) => Promise<string>>;

/** The built-ins, with bash run as `sandbox` says (environment, wrapper). */
export function createLocalTools(sandbox: ToolSandbox = defaultToolSandbox): LocalTools {
  return {
    bash: (input, ctx) => bash(input, ctx, sandbox),
    read_file: readFile,
    write_file: writeFile,
    edit_file: editFile,
    // The runtime answers it from its artifact store (the tool activity, the inline ports), never this code.
    read_artifact: async () => {
      throw new ToolFailure('read_artifact reads the outputs the runtime stored; it is answered by the tool activity or the inline runtime, not by local tool code.');
    },
  };
}

export const localToolImplementations: LocalTools = createLocalTools();
