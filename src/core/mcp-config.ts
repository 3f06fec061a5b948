import { z } from 'zod';
import { lazySchema } from './lazy-schema';

/**
 * MCP server configs as agents and workers give them (schemas and types only; see core/mcp.ts).
 */

const SERVER_NAME = /^[a-zA-Z0-9_-]{1,32}$/;

const stdioServerSchema = lazySchema(() => z
  .object({
    name: z.string().regex(SERVER_NAME, 'must be 1-32 letters, digits, _ or -'),
    transport: z.literal('stdio').optional(),
    /** The program to start; it runs in the session's sandbox directory with the bash tool's minimal environment. */
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    /** Extra variables for the server. In workflow history when the agent declares the server: no secrets here (register the server on the worker instead). */
    env: z.record(z.string(), z.string()).optional(),
    /** The server keeps state across calls (a browser, a database session): one connection per run (default true). */
    stateful: z.boolean().optional(),
  })
  .strict());

const httpServerSchema = lazySchema(() => z
  .object({
    name: z.string().regex(SERVER_NAME, 'must be 1-32 letters, digits, _ or -'),
    transport: z.literal('http').optional(),
    /** A streamable HTTP MCP endpoint. */
    url: z.string().url(),
    /** Sent with every request (e.g. Authorization). In history when the agent declares the server. */
    headers: z.record(z.string(), z.string()).optional(),
    stateful: z.boolean().optional(),
  })
  .strict());

export const mcpServerConfigSchema = lazySchema(() => z.union([stdioServerSchema, httpServerSchema]));

export type McpStdioServer = z.infer<typeof stdioServerSchema>;
export type McpHttpServer = z.infer<typeof httpServerSchema>;
export type McpServerConfig = McpStdioServer | McpHttpServer;

/**
 * How an agent names a server: a config it declares (travels through history), or the name of a
 * server the worker registered (`createWorker({ mcpServers })`), whose config — tokens included —
 * stays on the worker.
 */
export type McpServerRef = string | McpServerConfig;

export const mcpServerRefSchema = lazySchema(() => z.union([z.string().regex(SERVER_NAME, 'must be 1-32 letters, digits, _ or -'), mcpServerConfigSchema]));

export function mcpServerName(ref: McpServerRef): string {
  return typeof ref === 'string' ? ref : ref.name;
}

export function isHttpServer(config: McpServerConfig): config is McpHttpServer {
  return 'url' in config;
}
