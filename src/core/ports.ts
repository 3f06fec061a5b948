import type { AssistantEntry, Entry, Usage } from './entries';
import type { AgentEvent } from './events';
import type { ToolDefinition } from './tools';
import type { ToolSpec } from './tools-spec';
import type { McpServerRef, McpToolInfo } from './mcp';
import type { CompactionDecision, DecisionFacts } from './context/compaction/decide';
import type { MemoryPort } from './context/memory';
import type { GateCheck, GateCheckInput } from './context/compaction/gate';
import type { Eventually } from './pending';
import type { AppliedContextEdit, CompactionStrategySetting, ContextManagementParams, StrategyDecision } from './context/strategy';

/**
 * What a session needs from the world. The inline runtime calls Anthropic and runs tools directly;
 * the Temporal runtime schedules activities. The session logic above these ports is the same code in
 * both, and is deterministic given what the ports return.
 */
export interface ModelCallRequest {
  sessionId: string;
  model: string;
  maxTokens: number;
  system?: string;
  tools: ToolSpec[];
  /**
   * The conversation. Between two calls of a session it is either the same array with entries
   * appended (or, after a rolled-back prompt, cut back), or a new array when history was rewritten.
   */
  entries: readonly Entry[];
  /** Prompt caching: breakpoints on the tools, the system prompt and the conversation's tail. */
  cache?: PromptCache;
  /** Extended thinking with this budget (absent: off). */
  thinking?: ThinkingBudget;
  /** Claude's server-side context management edits (absent: none; the strategy is client). */
  contextManagement?: ContextManagementParams;
  /** The model connection (../core/connection-route; absent: the default, 'anthropic'). */
  connection?: string;
}

export interface ThinkingBudget {
  /** Tokens the model may think with (at least 1024); sent on top of maxTokens. */
  budgetTokens: number;
}

export interface PromptCache {
  /** How long the provider keeps the cached prefix (Anthropic: 5 minutes, or 1 hour at a higher write price). */
  ttl: '5m' | '1h';
}

/** What decideThenCallModel answers: the decision, and the reply unless the decision was to compact. */
export type DecidedModelCall =
  /** The decision rewrites history first (compact, mask): no call was made. */
  | { decision: CompactionDecision; result?: undefined }
  | { decision: CompactionDecision; result: ModelCallResult };

export interface ModelCallResult {
  entry: AssistantEntry;
  usage: Usage;
  stopReason: string | null;
  model: string;
  /** What the server cleared or compacted (only when the request sent context management). */
  contextManagement?: { applied: AppliedContextEdit[] };
}

export interface SummarizeRequest {
  sessionId: string;
  model: string;
  /** The model connection (absent: the default, 'anthropic'). */
  connection?: string;
  system: string;
  userText: string;
  maxTokens: number;
}

export interface ToolCallRequest {
  sessionId: string;
  id: string;
  name: string;
  input: unknown;
  cwd: string;
  timeoutMs?: number;
  /** Offload an output over this many UTF-8 bytes as an artifact (undefined: never). The session's setting. */
  offloadBytes?: number;
  /** A sub-agent's call: the parent's model connection, which the child uses unless it names its own (absent: the default). */
  connection?: string;
}

export interface ToolCallResult {
  content: string;
  isError: boolean;
  /** Where the runtime stored the full content (Temporal: its sha256 in the tool-result store). */
  contentRef?: string;
  /** The output was offloaded: `content` is its reference, read back with read_artifact. */
  artifact?: { ref: string; bytes: number };
}

export interface ResolveModelOptions {
  /** The window the agent set (`contextWindowTokens`): the runtime returns it and looks nothing up. */
  contextWindowTokens?: number;
  /**
   * compaction.strategy: the runtime looks up the model's capabilities and decides (absent or 'client':
   * nothing is looked up for it, and the result has no strategy, as before strategies existed).
   */
  strategy?: CompactionStrategySetting;
  /** The model connection (absent: the default, 'anthropic'); an unknown one is UNKNOWN_CONNECTION. */
  connection?: string;
}

export interface ResolvedModel {
  model: string;
  contextWindowTokens?: number;
  /** The recorded strategy decision (absent: client, decided by settings alone). */
  strategy?: StrategyDecision;
}

export interface RuntimePorts {
  readonly runtime: 'inline' | 'temporal';
  /**
   * Throws ModelCallError (kind decides retry and overflow handling). This and the other per-call
   * methods may answer with a Pending instead of a promise (workflow code: see ./pending).
   */
  callModel(req: ModelCallRequest): Eventually<ModelCallResult>;
  /**
   * Decides about compaction from these facts first, and makes the call only when the decision is not
   * to compact: one round trip for both. On Temporal the decision is recorded with the call.
   */
  decideThenCallModel(req: ModelCallRequest, facts: DecisionFacts): Eventually<DecidedModelCall>;
  summarize(req: SummarizeRequest): Promise<{ text: string; usage: Usage }>;
  runTool(call: ToolCallRequest, def: ToolDefinition): Eventually<ToolCallResult>;
  /** On Temporal a local activity, so the decision is recorded in history before it is acted on. */
  decideCompaction(facts: DecisionFacts): Promise<CompactionDecision>;
  /**
   * Checks a summary against the facts it must keep (the compaction gate). On Temporal a local
   * activity, so the answer is in history and a replay under other gate settings restates the same.
   * Absent: the pure check runs in place.
   */
  checkSummaryGate?(input: GateCheckInput): Promise<GateCheck>;
  /**
   * Resolves the model (undefined: the runtime's default) and its input window from the Models API
   * (undefined when the API cannot tell). Looked up once per model and cached; not at all when
   * `options.contextWindowTokens` is given (the default model name is still resolved).
   */
  resolveModel(model: string | undefined, options?: ResolveModelOptions): Promise<ResolvedModel>;
  /**
   * Whether code that issues new commands may run (Temporal: `patched(id)`, so histories recorded
   * before the change replay on the old path). Inline runs always take the new path. Absent: true.
   */
  patched?(id: string): boolean;
  /**
   * An MCP server's tools (on Temporal an activity: the list is recorded, so a replay never depends on
   * what the server lists today). `cwd` is where a stdio server runs. Absent: the runtime has no MCP.
   */
  listMcpTools?(server: McpServerRef, cwd: string): Promise<McpToolInfo[]>;
  /** Memory files (compaction.memory); absent: the runtime keeps none and the memory flush is off. */
  memory?: MemoryPort;
  /** Epoch ms; workflow time on Temporal. */
  now(): number;
  emit(event: AgentEvent): void;
}

/** New commands behind a patch id: the runtime's answer, or true where the runtime has no history. */
export function isPatched(ports: Pick<RuntimePorts, 'patched'>, id: string): boolean {
  return ports.patched ? ports.patched(id) : true;
}
