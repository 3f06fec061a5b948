/**
 * `agent.invoke(input, options)` and `openSession(agent, options)` check their options as `init()` does:
 * an unknown key is an error naming it (with the known key it most likely meant: `baseUrl` → `baseURL`),
 * never ignored. An ignored `baseUrl` sent the call to the real API and failed seconds later.
 */
import { z } from 'zod';
import { InvalidInputError } from '../core/errors';
import { parseWith } from '../core/validate';
import type { InvokeOptions } from '../core/agent';

const invokeShape = {
  apiKey: z.string().min(1).optional(),
  baseURL: z.string().url().optional(),
  model: z.string().min(1).optional(),
  cwd: z.string().min(1).optional(),
  onEvent: z.function().optional(),
  tools: z.array(z.unknown()).optional(), // each checked by the tool registry, which names what is wrong
  signal: z.custom<AbortSignal>((v) => typeof v === 'object' && v !== null && 'aborted' in v, 'expected an AbortSignal').optional(),
  memoryDir: z.string().min(1).optional(),
  onApproval: z.function().optional(),
  mcpServers: z.record(z.string(), z.unknown()).optional(), // each server checked where it is connected
  toolSandbox: z.object({}).passthrough().optional(), // its fields checked where bash's sandbox is resolved (tool-env.ts)
  connections: z.record(z.string(), z.object({ provider: z.string().min(1) }).passthrough()).optional(), // each connection's settings checked where it is made
  // Internal: how deep a sub-agent run is nested (inline sub-agents pass it to the child's invoke).
  fhDepth: z.number().int().min(0).optional(),
  fhConnection: z.string().optional(),
} satisfies Record<keyof InvokeOptions | 'fhDepth' | 'fhConnection', z.ZodType>; // a new InvokeOptions key must be listed here

/** Keys not shown in "known options" (set by the SDK itself). */
const INTERNAL = new Set(['fhDepth', 'fhConnection']);

const sessionShape = {
  ...invokeShape,
  dir: z.string().min(1).optional(),
  id: z.string().optional(),
  input: z.unknown().optional(),
  title: z.string().trim().min(1).max(200).optional(),
};

function checkKeys(options: unknown, known: string[], what: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidInputError(what, '', [{ path: '', message: `expected an object of options, got ${Array.isArray(options) ? 'an array' : typeof options}` }]);
  }
  // Every unknown key at once: fixing `apikey` only to be told about `modle` next is a round trip per typo.
  const issues = Object.keys(options)
    .filter((key) => !known.includes(key))
    .map((key) => {
      const near = known.find((k) => k.toLowerCase() === key.toLowerCase());
      const hint = near ? `did you mean '${near}'?` : `known options: ${known.filter((k) => !INTERNAL.has(k)).join(', ')}`;
      return { path: key, message: `unknown option '${key}' (${hint})` };
    });
  if (issues.length > 0) throw new InvalidInputError(what, issues[0]!.path, issues);
}

export function parseInvokeOptions(options: unknown): void {
  if (options === undefined) return;
  checkKeys(options, Object.keys(invokeShape), 'invoke options');
  parseWith(z.object(invokeShape), options, 'invoke options');
}

export function parseOpenSessionOptions(options: unknown): void {
  if (options === undefined) return;
  checkKeys(options, Object.keys(sessionShape), 'openSession options');
  parseWith(z.object(sessionShape), options, 'openSession options');
}
