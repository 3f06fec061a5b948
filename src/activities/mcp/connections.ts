import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Lru } from '../../core/lru';
import { isHttpServer, mcpStateLostNote, McpServerUnknownError, McpUnavailableError, type McpServerConfig, type McpServerRef, type McpToolInfo } from '../../core/mcp';
import { defaultToolSandbox, type ToolSandbox } from '../tools/tool-env';
import { stdioLaunch } from './launch';

export interface McpConnectionsOptions {
  /** Servers registered on this worker, by name (their config, tokens included, never enters history). */
  servers?: Record<string, McpServerConfig>;
  /** How stdio servers are started: the bash tool's sandbox. */
  sandbox?: ToolSandbox;
  /** Close a connection unused this long — no call in flight, the last one ended that long ago (default 10 minutes). */
  idleMs?: number;
}

/** What a tool call answers: text for the model, and whether it is an error. */
export interface McpCallResult {
  content: string;
  isError: boolean;
}

interface Connection {
  client: Client;
  closed: boolean;
  stderrTail: string;
  idle?: NodeJS.Timeout;
  /** Requests (calls, tool lists) sent and not yet answered: while any is, the connection is not idle. */
  inFlight: number;
  /** This connection replaces a stateful one closed for idling: its first call's result says the state is gone. */
  afterIdleClose?: boolean;
}

const DEFAULT_IDLE_MS = 10 * 60_000;
/** MCP's own default request timeout is 60 s; a tool may take longer (its timeoutMs or the activity's bound then). */
const DEFAULT_CALL_TIMEOUT_MS = 30 * 60_000;
const STDERR_TAIL = 2_000;
/**
 * How many idle-closed stateful connections are remembered until their run calls again (one per run
 * and server; a run that never calls again is forgotten as the oldest).
 */
const IDLE_CLOSED_REMEMBERED = 1_000;

/**
 * The MCP connections of one worker (or one inline process). A stateful server (the default) gets one
 * connection per run — `scope` is the run's id — so a browser or a database session lives across the
 * run's calls; a connection this process does not have (a new worker after a loss, an idle one closed)
 * is opened on first use. A server that dies is dropped and reopened by the next call.
 */
export class McpConnections {
  private readonly open = new Map<string, Promise<Connection>>();
  /** Keys of stateful connections closed for idling: the next connection under one carries the note. */
  private readonly idleClosed = new Lru<string, true>(IDLE_CLOSED_REMEMBERED, 'remembered idle-closed MCP connections');
  private readonly sandbox: ToolSandbox;

  constructor(private readonly options: McpConnectionsOptions = {}) {
    this.sandbox = options.sandbox ?? defaultToolSandbox;
  }

  /** A registered server's config, or the declared one. */
  resolve(ref: McpServerRef): McpServerConfig {
    if (typeof ref !== 'string') return ref;
    const config = this.options.servers?.[ref];
    if (!config) throw new McpServerUnknownError(ref, Object.keys(this.options.servers ?? {}));
    return config;
  }

  async list(ref: McpServerRef, scope: string, cwd: string, signal?: AbortSignal): Promise<McpToolInfo[]> {
    const config = this.resolve(ref);
    const conn = await this.connection(config, scope, cwd);
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    this.begin(conn);
    try {
      do {
        const page = await conn.client.listTools(cursor ? { cursor } : {}, { signal });
        for (const t of page.tools) {
          tools.push({
            name: t.name,
            ...(t.description ? { description: t.description } : {}),
            inputSchema: t.inputSchema as Record<string, unknown>,
            ...(t.annotations?.readOnlyHint ? { readOnly: true } : {}),
          });
        }
        cursor = page.nextCursor;
      } while (cursor);
    } catch (err) {
      if (signal?.aborted) throw err;
      this.drop(config, scope, cwd);
      throw new McpUnavailableError(config.name, `listing its tools failed: ${describe(err, conn)}`);
    } finally {
      this.end(config, scope, cwd, conn);
    }
    return tools;
  }

  /**
   * Calls a tool. What goes wrong on the server's side — an error result, an unknown tool, bad
   * arguments, the server dying mid-call — is answered as an error result the model reads; only
   * cancellation throws.
   */
  async call(ref: McpServerRef, scope: string, cwd: string, tool: string, args: unknown, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<McpCallResult> {
    const config = this.resolve(ref);
    let conn: Connection;
    try {
      conn = await this.connection(config, scope, cwd);
    } catch (err) {
      return { content: `MCP server '${config.name}' is unavailable: ${err instanceof Error ? err.message : String(err)}`, isError: true };
    }
    this.begin(conn);
    try {
      const result = await conn.client.callTool(
        { name: tool, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        { signal: opts.signal, timeout: opts.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, resetTimeoutOnProgress: true },
      );
      return { content: this.idleNote(config, conn) + resultText(result as { content?: unknown; structuredContent?: unknown }), isError: result.isError === true };
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      if (conn.closed) {
        this.drop(config, scope, cwd);
        return { content: `MCP server '${config.name}' closed the connection during the call (${describe(err, conn)}); it is started again for the next call.`, isError: true };
      }
      return { content: `${this.idleNote(config, conn)}MCP tool '${tool}' on server '${config.name}' failed: ${describe(err, conn)}`, isError: true };
    } finally {
      this.end(config, scope, cwd, conn);
    }
  }

  /** Closes every connection (worker shutdown, the end of an inline run). */
  async closeAll(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map(async (p) => closeQuietly(await p.catch(() => undefined))));
  }

  private key(config: McpServerConfig, scope: string, cwd: string): string {
    // A stateless server's connection is shared by every run on this worker.
    const owner = config.stateful === false ? '*' : scope;
    return `${owner}\u0000${config.name}\u0000${JSON.stringify(config)}\u0000${cwd}`;
  }

  private connection(config: McpServerConfig, scope: string, cwd: string): Promise<Connection> {
    const key = this.key(config, scope, cwd);
    let conn = this.open.get(key);
    if (!conn) {
      conn = this.connect(config, cwd);
      this.open.set(key, conn);
      conn.then(
        (c) => {
          if (this.idleClosed.get(key)) {
            this.idleClosed.delete(key);
            c.afterIdleClose = true;
          }
          this.idleFrom(config, scope, cwd, c);
        },
        () => this.open.delete(key),
      );
    }
    return conn;
  }

  private async connect(config: McpServerConfig, cwd: string): Promise<Connection> {
    // Loaded on first connection: a worker whose agents use no MCP server never loads the SDK.
    const { Client } = require('@modelcontextprotocol/sdk/client/index.js') as typeof import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js') as typeof import('@modelcontextprotocol/sdk/client/stdio.js');
    const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js') as typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const client = new Client({ name: 'fabric-harness', version: sdkVersion() });
    const conn: Connection = { client, closed: false, stderrTail: '', inFlight: 0 };
    const transport = isHttpServer(config)
      ? new StreamableHTTPClientTransport(new URL(config.url), config.headers ? { requestInit: { headers: config.headers } } : undefined)
      : new StdioClientTransport(stdioLaunch(this.sandbox, config, cwd));
    if (transport instanceof StdioClientTransport) {
      transport.stderr?.on('data', (d: Buffer) => {
        conn.stderrTail = (conn.stderrTail + d.toString()).slice(-STDERR_TAIL);
      });
    }
    client.onclose = () => {
      conn.closed = true;
    };
    try {
      await client.connect(transport);
    } catch (err) {
      await closeQuietly(conn);
      throw new McpUnavailableError(config.name, describe(err, conn));
    }
    return conn;
  }

  /** A request starts: the idle clock stops (a call longer than the idle time is not cut). */
  private begin(conn: Connection): void {
    conn.inFlight++;
    clearTimeout(conn.idle);
    conn.idle = undefined;
  }

  /** A request ended, answered or failed: the idle clock starts when the last one in flight ends. */
  private end(config: McpServerConfig, scope: string, cwd: string, conn: Connection): void {
    conn.inFlight--;
    if (!conn.closed) this.idleFrom(config, scope, cwd, conn);
  }

  /** Starts the idle clock now, unless a request is in flight. */
  private idleFrom(config: McpServerConfig, scope: string, cwd: string, conn: Connection): void {
    clearTimeout(conn.idle);
    conn.idle = undefined;
    if (conn.inFlight > 0) return;
    conn.idle = setTimeout(() => {
      if (conn.inFlight > 0 || conn.closed) return;
      // The run's next call opens a new connection: the state this one held is gone, and that call says so.
      if (config.stateful !== false) this.idleClosed.set(this.key(config, scope, cwd), true);
      this.drop(config, scope, cwd);
    }, this.options.idleMs ?? DEFAULT_IDLE_MS);
    conn.idle.unref();
  }

  /** The note a connection opened after an idle close puts before its first call's result (then none). */
  private idleNote(config: McpServerConfig, conn: Connection): string {
    if (!conn.afterIdleClose) return '';
    conn.afterIdleClose = false;
    return mcpStateLostNote(config.name, `its connection was closed after ${span(this.options.idleMs ?? DEFAULT_IDLE_MS)} unused, so this call ran on a new connection`);
  }

  private drop(config: McpServerConfig, scope: string, cwd: string): void {
    const key = this.key(config, scope, cwd);
    const conn = this.open.get(key);
    this.open.delete(key);
    void conn?.then(closeQuietly, () => undefined);
  }
}

async function closeQuietly(conn: Connection | undefined): Promise<void> {
  if (!conn) return;
  clearTimeout(conn.idle);
  conn.closed = true;
  await conn.client.close().catch(() => undefined);
}

/** A duration as the note says it: whole minutes (the default is 10), else seconds, else milliseconds. */
function span(ms: number): string {
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} minutes`;
  return ms >= 1000 ? `${Math.round(ms / 1000)} seconds` : `${ms} ms`;
}

function describe(err: unknown, conn: Connection): string {
  const message = err instanceof Error ? err.message : String(err);
  const stderr = conn.stderrTail.trim();
  return stderr ? `${message}; server stderr: ${stderr.slice(-500)}` : message;
}

type ContentBlock = { type: string; text?: string; mimeType?: string; data?: string; resource?: { uri: string; text?: string }; uri?: string; name?: string };

/** The result as text: text blocks as they are, other blocks described (the model gets no binary). */
function resultText(result: { content?: unknown; structuredContent?: unknown; toolResult?: unknown }): string {
  if (result.content === undefined && result.toolResult !== undefined) return JSON.stringify(result.toolResult);
  const blocks = Array.isArray(result.content) ? (result.content as ContentBlock[]) : [];
  if (blocks.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return blocks
    .map((b) => {
      if (b.type === 'text') return b.text ?? '';
      if (b.type === 'resource') return b.resource?.text ?? `[resource ${b.resource?.uri ?? ''}]`;
      if (b.type === 'resource_link') return `[resource ${b.uri ?? ''}${b.name ? ` (${b.name})` : ''}]`;
      if (b.type === 'image' || b.type === 'audio') return `[${b.type} ${b.mimeType ?? ''}, ${Math.floor(((b.data?.length ?? 0) * 3) / 4)} bytes, not shown]`;
      return `[${b.type} content]`;
    })
    .join('\n');
}

/** This package's version (src/activities/mcp and dist/activities/mcp both sit three levels below package.json), told to MCP servers. */
function sdkVersion(): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('../../../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
