import { z } from 'zod';
import { FabricError } from './errors';
import type { ToolDefinition } from './tools';
import { mcpServerName, type McpServerRef } from './mcp-config';
import { lazySchema } from './lazy-schema';

export * from './mcp-config';

/**
 * MCP servers as tool sources. Pure: the schemas, the names the model sees, and the tool definitions
 * made from a server's recorded tool list. Connecting and calling is Node code (src/activities/mcp/).
 */

/** One tool as the server listed it: recorded (an activity result on Temporal) so replays never ask again. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  readOnly?: boolean;
}


export class McpServerUnknownError extends FabricError {
  constructor(
    readonly server: string,
    readonly known: string[],
  ) {
    super('MCP_SERVER_UNKNOWN', `MCP server '${server}' is not registered on this worker. Registered: ${known.length ? known.join(', ') : '(none)'}.`);
  }
}

export class McpUnavailableError extends FabricError {
  constructor(
    readonly server: string,
    reason: string,
  ) {
    super('MCP_UNAVAILABLE', `MCP server '${server}' could not be reached: ${reason}`);
  }
}

export class DuplicateMcpServerError extends FabricError {
  constructor(readonly server: string) {
    super('INVALID_INPUT', `init options: mcp lists server '${server}' twice; give each server its own name`);
  }
}

/**
 * What the model reads first in a tool result that ran on a new connection to a stateful server; `how`
 * says why the connection is new (a lost worker, an idle close). One wording for every such path.
 */
export function mcpStateLostNote(server: string, how: string): string {
  return `[MCP server '${server}': ${how}; state the server kept for the earlier calls (an open page, a session, counters) is lost.]\n`;
}

const NAME_LIMIT = 64;

/** The name the model sees: `<server>__<tool>`, in the API's alphabet, at most 64 characters. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}__${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, NAME_LIMIT);
}

/** Any JSON object goes through: the server validates its own input and its errors reach the model. */
const anyObject = lazySchema(() => z.record(z.string(), z.unknown()));

/** The tool definitions a server's recorded list makes; a name clash after shortening keeps the first. */
export function mcpToolDefinitions(server: McpServerRef, tools: readonly McpToolInfo[]): ToolDefinition[] {
  const name = mcpServerName(server);
  const seen = new Set<string>();
  const defs: ToolDefinition[] = [];
  for (const t of tools) {
    const modelName = mcpToolName(name, t.name);
    if (seen.has(modelName)) continue;
    seen.add(modelName);
    defs.push({
      kind: 'tool',
      name: modelName,
      description: t.description || `${t.name} (MCP server ${name})`,
      input: anyObject,
      jsonSchema: objectSchema(t.inputSchema),
      mcp: { server, tool: t.name },
      ...(t.readOnly ? { readOnly: true } : {}),
    });
  }
  return defs;
}

function objectSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema ?? {};
  return rest.type === 'object' ? rest : { type: 'object', properties: {} };
}
