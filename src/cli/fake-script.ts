/**
 * The scripted fake Anthropic server as `fh fake` and `fh demo` run it: steps from a JSON file (or
 * `--say`), the side requests the harness makes by itself (session titles, summaries, memory) answered
 * by routes so they never eat a step, and a reply that says so when the script has run out (or, looping, the
 * script again). It is a
 * script, not a model: each step is one canned reply to one model call.
 */
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { SUMMARIZE_MARKER } from '../core/context/compaction/summary-prompt';
import { MEMORY_COMPACT_MARKER, MEMORY_EXTRACT_MARKER } from '../core/context/memory-extract';
import { callTools, say, type FakeRoute, type FakeStep } from '../testing/anthropic/fake-anthropic';
import { CliError, EXIT } from './errors';

const toolCall = z.object({ name: z.string().min(1), input: z.record(z.string(), z.unknown()).default({}) }).strict();

/** One step of a script file: text to say, one tool call, several at once, or a raw step of the fake. */
const stepSchema = z.union([
  z.string(),
  z.object({ tool: z.string().min(1), input: z.record(z.string(), z.unknown()).default({}) }).strict(),
  z.object({ tools: z.array(toolCall).min(1) }).strict(),
  z.object({ kind: z.enum(['text', 'tool_use', 'reply', 'error']) }).passthrough(),
]);

export const SCRIPT_FORMAT =
  'a JSON array of steps, one per model call: "text" (the model says it), {"tool": "name", "input": {...}} ' +
  '(one tool call), {"tools": [{"name": "...", "input": {...}}, ...]} (calls at once)';

export function toFakeSteps(raw: unknown, where: string): FakeStep[] {
  const parsed = z.array(stepSchema).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CliError(EXIT.USAGE, `${where}: step ${issue.path.join('.') || '(top)'}: ${issue.message}; a script is ${SCRIPT_FORMAT}`);
  }
  return parsed.data.map((s) => {
    if (typeof s === 'string') return say(s);
    const step = s as { tool?: string; input?: Record<string, unknown>; tools?: Array<{ name: string; input: Record<string, unknown> }> };
    if (typeof step.tool === 'string') return callTools({ name: step.tool, input: step.input ?? {} });
    if (Array.isArray(step.tools)) return callTools(...step.tools);
    return s as unknown as FakeStep;
  });
}

export async function readScriptFile(file: string): Promise<FakeStep[]> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(EXIT.USAGE, `--script ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError(EXIT.USAGE, `--script ${file}: not JSON (${(err as Error).message}); a script is ${SCRIPT_FORMAT}`);
  }
  return toFakeSteps(raw, `--script ${file}`);
}

export const SCRIPT_DONE_REPLY =
  '(fh fake: the script has no reply left for this call. This is a scripted fake model server, not a model.)';

/**
 * Routes for what the harness asks by itself, so a script holds only the conversation's replies:
 * summaries, memory, session titles, and a plain reply once the script is used up.
 */
export function sideRequestRoute(remaining: () => number, refill?: () => void): FakeRoute {
  return (req) => {
    // Anthropic's `system`, Gemini's `systemInstruction` (fh fake --provider google).
    const system = JSON.stringify(req.body?.systemInstruction !== undefined && req.body?.system === undefined ? req.body.systemInstruction : systemOf(req.body));
    if (system.includes(SUMMARIZE_MARKER)) return say('## Goal\nThe scripted conversation.\n## Progress\nScripted steps ran.');
    if (system.includes(MEMORY_EXTRACT_MARKER) || system.includes(MEMORY_COMPACT_MARKER)) return say('- (fh fake: no memory)');
    if (system.includes('You name conversations.')) return say('Scripted fake session');
    if (remaining() === 0) {
      if (!refill) return say(SCRIPT_DONE_REPLY);
      refill(); // --loop: the script starts over, and this call plays its first step
    }
    return undefined;
  };
}

/** A request's system prompt in any protocol the fakes speak: Anthropic's `system`, Responses' `instructions`, Chat's system message. */
function systemOf(body: { system?: unknown; instructions?: unknown; messages?: Array<{ role?: unknown; content?: unknown }> } | undefined): unknown {
  if (body?.system !== undefined) return body.system;
  if (body?.instructions !== undefined) return body.instructions;
  const first = Array.isArray(body?.messages) ? body.messages[0] : undefined;
  return first?.role === 'system' || first?.role === 'developer' ? first.content : '';
}
