import { decideFromFacts } from '../core/context/compaction/decide';
import type { EventListener } from '../core/events';
import { ModelCallError, RuntimeUnavailableError } from '../core/errors';
import type { ModelCallRequest, RuntimePorts } from '../core/ports';
import type { MessagesCall, ModelConnection } from '../activities/models/anthropic/messages';
import { createLocalTools } from '../activities/tools/local-tools';
import { resolveToolSandbox } from '../activities/tools/tool-env';
import type { ToolSandboxSettings } from '../core/agent';
import { offloadToolResult, readArtifact } from '../activities/stores/artifacts';
import { MemoryTranscriptStore } from '../activities/stores/transcript-store';
import { ToolResultStore } from '../activities/stores/tool-results';
import { isReadArtifact } from '../core/context/artifacts';
import type { ToolRegistry } from '../core/tool-registry';
import { inlineMemoryPort } from './memory';
import { InlineStreamer } from './stream-calls';
import type { McpServerConfig } from '../core/mcp';
import type { McpConnections } from '../activities/mcp/connections';
import type { SubAgentRunner } from './sub-agents';
import { ModelService, runToolWithOffload, type AroundCall } from '../activities/models/model-service';
import type { ModelConnectionSettings } from '../activities/models/connections';

export interface InlinePortOptions extends ModelConnection {
  model?: string;
  /** Named model connections (invoke's `connections`), besides the built-in ones: see activities/models/connections. */
  connections?: Record<string, ModelConnectionSettings>;
  onEvent?: EventListener;
  /** Cancels the run's model calls and tools when aborted (invoke's `signal`). */
  signal?: AbortSignal;
  /** Code for declared tools (invoke's `tools`); a tool's own execute comes first. */
  tools?: ToolRegistry;
  /** The agent run (the default memory key; 'default' for a bare init()). */
  agentName?: string;
  /** Where memory files are kept (default: in this process only). */
  memoryDir?: string;
  /** How bash runs (invoke's `toolSandbox`): resolved once per run, see tool-env.ts. */
  toolSandbox?: ToolSandboxSettings;
  /** Attempts for retryable model errors (429/529/5xx/network); Temporal's retry policy plays this role there. */
  maxAttempts?: number;
  /** MCP servers this process registers, by name (invoke's `mcpServers`). */
  mcpServers?: Record<string, McpServerConfig>;
  /** Runs sub-agents (agentAsTool) in this process. */
  subAgents?: SubAgentRunner;
}

/** Inline ports own the run's MCP connections: close them when the run ends. */
export type InlinePorts = RuntimePorts & { close(): Promise<void> };

/**
 * The in-process runtime: the same activity code, called directly. Retryable model errors are retried
 * here with backoff (honouring retry-after), as the Temporal retry policy does on a worker.
 */
export function createInlinePorts(opts: InlinePortOptions): InlinePorts {
  const models = new ModelService({ connection: { apiKey: opts.apiKey, baseURL: opts.baseURL }, connections: opts.connections, defaultModel: opts.model });
  // The same confinement as a worker's bash (bubblewrap by default), settings checked before the run starts.
  const sandbox = resolveToolSandbox(opts.toolSandbox);
  const local = createLocalTools(sandbox);
  // invoke's `signal`: aborting it cancels the model call in flight and the tools (bash: its process group).
  const signal = opts.signal ?? new AbortController().signal;
  const maxAttempts = opts.maxAttempts ?? 5;
  const retrying: AroundCall = (fn) => withRetries(maxAttempts, fn);
  const direct: AroundCall = (fn) => fn();
  // Loaded on first use: runs without MCP servers never load the MCP SDK.
  let mcp: McpConnections | undefined;
  const mcpConnections = (): McpConnections => {
    if (!mcp) {
      const { McpConnections: Connections } = require('../activities/mcp/connections') as typeof import('../activities/mcp/connections');
      mcp = new Connections({ servers: opts.mcpServers, sandbox }); // stdio servers confined as bash is
    }
    return mcp;
  };
  // The run is the connection's owner: one scope per inline run.
  const mcpScope = `inline-${process.pid}-${++inlineRuns}`;

  // This run's artifacts and full tool outputs (what a worker keeps in its store), for read_artifact.
  // In memory: they live as long as the run, as the conversation that refers to them does.
  const artifacts = new ToolResultStore(new MemoryTranscriptStore());
  const messagesCall = (req: ModelCallRequest): MessagesCall => ({
    model: req.model,
    maxTokens: req.maxTokens,
    system: req.system,
    tools: req.tools,
    entries: req.entries,
    cache: req.cache,
    thinking: req.thinking,
    contextManagement: req.contextManagement,
  });

  // With a listener, model calls stream and their deltas reach it as `stream` events.
  const streamer = opts.onEvent ? new InlineStreamer((e) => opts.onEvent!(e)) : undefined;
  const streamed = streamer ? (connection?: string) => (call: MessagesCall) => streamer.call(() => models.capable(call, connection), call, signal, maxAttempts) : undefined;

  return {
    runtime: 'inline',
    callModel: (req) => (streamed ? streamed(req.connection)(messagesCall(req)) : models.callModel(messagesCall(req), signal, retrying, req.connection)),
    memory: inlineMemoryPort({
      agentName: opts.agentName ?? 'default',
      dir: opts.memoryDir,
      call: (model, connection) => async (req) => ({ text: (await models.text(model, req, signal, retrying, connection)).text }),
    }),
    async decideThenCallModel(req, facts) {
      const { decision, result } = await models.decideThenCall(facts, async () => messagesCall(req), () => signal, retrying, streamed?.(req.connection), req.connection);
      return result ? { decision: decision!, result } : { decision: decision! };
    },
    summarize: (req) => models.text(req.model, req, signal, retrying, req.connection),
    listMcpTools: (server, cwd) => mcpConnections().list(server, mcpScope, cwd, signal),
    close: async () => {
      await mcp?.closeAll();
    },
    async runTool(call, def) {
      if (isReadArtifact(call.name)) return readArtifact(artifacts, call.input);
      if (def.subAgent) {
        if (!opts.subAgents) throw new RuntimeUnavailableError(`tool '${call.name}' is a sub-agent, and this runtime runs none`);
        return opts.subAgents(call, def.subAgent);
      }
      const context = { cwd: call.cwd, signal, heartbeat: () => undefined };
      const served = def.mcp;
      const result = served
        ? await offloadToolResult(artifacts, await mcpConnections().call(served.server, mcpScope, call.cwd, served.tool, call.input, { signal, timeoutMs: def.timeoutMs }), { tool: call.name, input: call.input }, call.offloadBytes)
        : await runToolWithOffload(artifacts, def.execute ?? opts.tools?.get(call.name), call, context, { where: 'inline', local, timeoutMs: def.timeoutMs }, direct);
      if (result.artifact) return result;
      // Kept as a worker keeps it, so a capped result's marker names a ref read_artifact can page back.
      const contentRef = await artifacts.save(result.content);
      return contentRef ? { ...result, contentRef } : result;
    },
    decideCompaction: async (facts) => decideFromFacts(facts),
    resolveModel: (model, options = {}) => models.resolveModel({ model, contextWindowTokens: options.contextWindowTokens, strategy: options.strategy, connection: options.connection }, direct),
    now: () => Date.now(),
    emit: (event) => opts.onEvent?.(event),
  };
}

let inlineRuns = 0;

async function withRetries<T>(maxAttempts: number, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ModelCallError) || !err.retryable || attempt >= maxAttempts) throw err;
      const backoff = err.retryAfterMs ?? Math.min(30_000, 500 * 2 ** (attempt - 1));
      await new Promise((r) => setTimeout(r, backoff));
    }
  }
}
