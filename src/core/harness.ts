import { z } from 'zod';
import { builtinTools, isBuiltinToolName, type BuiltinToolName } from './builtin-tools';
import type { EventListener } from './events';
import { builtinContextWindow } from './models';
import { modelInfo, modelOverridesSchema, type ModelOverrides } from './model-table';
import { costBudgetSchema, type CostBudget } from './costs';
import type { RuntimePorts } from './ports';
import { Conversation, type ConversationConfig, type ToolAuthorizer } from './conversation';
import { compactionHooksSchema, type CompactionHooks } from './context/compaction/hooks';
import { compactionSettingsSchema, parseCompactionSettings, type CompactionSettings } from './context/settings';
import type { ToolDefinition } from './tools';
import { resolveThinking, thinkingOptionSchema, type ThinkingOption } from './thinking';
import { READ_ARTIFACT, READ_ARTIFACT_ALIAS, resolveOffloadBytes } from './context/artifacts';
import { parseWith } from './validate';
import { nearest } from './nearest';
import { DuplicateMcpServerError, mcpServerName, mcpServerRefSchema, mcpToolDefinitions, type McpServerRef } from './mcp';
import { RuntimeUnavailableError } from './errors';
import { PortMemory } from './context/memory';
import { memoryBlock } from './context/memory-extract';
import { resolveMemorySettings } from './context/memory-settings';
import { ConnectionRoute, routedPorts } from './connection-route';
import { connectionNameSchema } from './connection-name';
import { lazySchema } from './lazy-schema';

/** Which entrypoint defined the agent: it decides what is injected by default. */
export type Flavour = 'default' | 'strict';

/** Built-in tool names an agent may list; read_tool_result is read_artifact's 0.3.0 name. */
const builtinToolNames = [...(Object.keys(builtinTools) as BuiltinToolName[]), READ_ARTIFACT_ALIAS] as const;

const toolRef = lazySchema(() => z.custom<ToolDefinition | string>().superRefine((v, ctx) => {
  if (typeof v === 'string') {
    if ((builtinToolNames as readonly string[]).includes(v)) return;
    const near = nearest(v, builtinToolNames);
    ctx.addIssue({
      code: 'custom',
      message: `unknown built-in tool '${v}'${near ? ` (did you mean '${near}'?)` : ''}; the built-ins are ${builtinToolNames.filter((n) => n !== READ_ARTIFACT_ALIAS).join(', ')}`,
    });
  } else if (typeof v !== 'object' || v === null || (v as ToolDefinition).kind !== 'tool') {
    ctx.addIssue({ code: 'custom', message: `expected a tool({...}) definition or a built-in tool name (${builtinToolNames.filter((n) => n !== READ_ARTIFACT_ALIAS).join(', ')})` });
  }
}));

/** The tool list: each entry known, and each name once (the API answers a duplicate with a 400 at the first call). */
const toolList = lazySchema(() => z.array(toolRef).superRefine((refs, ctx) => {
  const seen = new Map<string, number>();
  refs.forEach((ref, i) => {
    const name = typeof ref === 'string' ? (ref === READ_ARTIFACT_ALIAS ? READ_ARTIFACT : ref) : (ref as ToolDefinition)?.name;
    if (typeof name !== 'string') return;
    const first = seen.get(name);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate tool name '${name}' (also at tools.${first}); each tool once` });
    else seen.set(name, i);
  });
}));

const sandboxSchema = lazySchema(() => z.union([
  z.literal('local'),
  z.object({ type: z.literal('local'), cwd: z.string().min(1).optional() }).strict(),
]));

export const initOptionsSchema = lazySchema(() => z
  .object({
    runtime: z.enum(['inline', 'temporal']).optional(),
    sandbox: sandboxSchema.optional(),
    model: z.string().min(1).optional(),
    connection: connectionNameSchema.optional(),
    maxTokens: z.number().int().positive().optional(),
    system: z.string().optional(),
    tools: toolList.optional(),
    compaction: compactionSettingsSchema.optional(),
    contextWindowTokens: z.number().int().positive().optional(),
    maxSteps: z.number().int().positive().optional(),
    maxTurns: z.number().int().positive().optional(),
    promptCaching: z.union([z.boolean(), z.object({ ttl: z.enum(['5m', '1h']).optional() }).strict()]).optional(),
    thinking: thinkingOptionSchema.optional(),
    onEvent: z.custom<EventListener>((v) => typeof v === 'function', { message: 'expected a function' }).optional(),
    hooks: compactionHooksSchema.optional(),
    mcp: z.array(mcpServerRefSchema).optional(),
    models: modelOverridesSchema.optional(),
    budget: costBudgetSchema.optional(),
  })
  .strict());

export type InitOptions = {
  /** Informational inside a workflow (it always runs on Temporal there); 'temporal' outside one is an error at prompt time. */
  runtime?: 'inline' | 'temporal';
  /** Where built-in tools run: the local machine (the worker's, on Temporal), in `cwd`. */
  sandbox?: 'local' | { type: 'local'; cwd?: string };
  /** Defaults to the runtime's default model (ANTHROPIC_MODEL on the worker, else a current Claude model). */
  model?: string;
  /**
   * The model connection (a provider and its credentials, configured on the worker or given to invoke by
   * name): default 'anthropic'. A worker without it refuses the run with UNKNOWN_CONNECTION naming its own.
   */
  connection?: string;
  maxTokens?: number;
  system?: string;
  tools?: Array<ToolDefinition | BuiltinToolName | typeof READ_ARTIFACT_ALIAS>;
  compaction?: CompactionSettings;
  /** Overrides the window from the Models API and the built-in table. */
  contextWindowTokens?: number;
  /** Steps (tool rounds) one prompt may take before MaxStepsExceededError (default 50). */
  maxSteps?: number;
  /** @deprecated since 0.5.0: `maxSteps` (a turn is a whole prompt answered; a tool round is a step). */
  maxTurns?: number;
  /**
   * Prompt caching (off by default): cache breakpoints on the tools, the system prompt and the end of the
   * conversation, so each call reads the prefix the previous one wrote. `true` is a 5-minute cache.
   */
  promptCaching?: boolean | { ttl?: '5m' | '1h' };
  /**
   * Extended thinking (off by default): a level (`'low'` 2048 tokens, `'medium'` 8192, `'high'` 16384,
   * `'max'` 32000) or `{ budgetTokens }` (at least 1024). The budget is added to `maxTokens` on each
   * call, so the reply keeps its room. Thinking blocks are kept in the history and sent back unmodified.
   */
  thinking?: ThinkingOption;
  onEvent?: EventListener;
  /**
   * Compaction hooks: `beforeCompact` may veto a compaction or add instructions to its summary request;
   * `afterCompact` may inject text right after the summary (e.g. a memory file). On Temporal they run in
   * workflow code, so they must be deterministic (no I/O, clocks or randomness; use activities for that).
   */
  hooks?: CompactionHooks;
  /**
   * MCP servers whose tools the sessions get (as `<server>__<tool>`): a config (`{ name, command, args?,
   * env? }` for stdio, `{ name, url, headers? }` for streamable HTTP) or the name of a server the worker
   * registered. The tool list is fetched once per run and recorded.
   */
  mcp?: McpServerRef[];
  /**
   * Your rows of the model table, by exact model id, over the built-in ones: `{ contextWindowTokens?,
   * maxOutputTokens?, prices?: { input, output, cacheRead?, cacheWrite? } }` (USD per million tokens). A model
   * without a price has an unknown cost (docs/models.md).
   */
  models?: ModelOverrides;
  /** Each session's spending limit: no model call starts that could take its cost past `maxCostUsd`. */
  budget?: CostBudget;
};

export type SessionOptions = Pick<InitOptions, 'model' | 'connection' | 'system' | 'tools' | 'compaction' | 'maxTokens' | 'maxSteps' | 'maxTurns' | 'promptCaching' | 'thinking'> & {
  /** A name for the session, unique within the run (default: main, main-2, …). */
  id?: string;
};

export const sessionOptionsSchema = lazySchema(() => initOptionsSchema
  .pick({ model: true, connection: true, system: true, tools: true, compaction: true, maxTokens: true, maxSteps: true, maxTurns: true, promptCaching: true, thinking: true })
  .extend({ id: z.string().min(1).max(64).optional() })
  .strict());

export interface ServeOptions {
  /** Stop after this long without a prompt (ms). Default: 10 minutes. */
  idleTimeoutMs?: number;
}

/** Hosts that can take prompts from outside the run (the Temporal workflow) implement this. */
export interface PromptHost {
  serve(options: ServeOptions): Promise<number>;
  /** Tools the host offers the model now, besides the agent's (a session in explore mode: submit_plan); asked before each model call. */
  offeredTools?(): readonly ToolDefinition[];
}

const DEFAULT_MAX_TOKENS = 4096;
const DEFAULT_MAX_STEPS = 50;

/** What `init()` returns: makes sessions that share the runtime, tools and settings. */
export class Harness {
  private readonly list: Conversation[] = [];
  /** Each conversation's connection route (a session host changes it before the first message). */
  private readonly routes = new WeakMap<Conversation, ConnectionRoute>();
  /** Each MCP server's tools, listed once per run (and cwd), whichever session asks first. */
  private readonly mcpTools = new Map<string, Promise<ToolDefinition[]>>();

  constructor(
    private readonly ports: RuntimePorts,
    readonly options: InitOptions,
    readonly flavour: Flavour,
    private readonly defaultCwd: string,
    private readonly host?: PromptHost,
    /** Asked before each tool call of this harness's sessions (a session workflow's permission mode). */
    private readonly authorize?: ToolAuthorizer,
    /** Asked for calls of tools that need approval, in a plain run (a client on Temporal, onApproval inline). */
    private readonly approver?: ToolAuthorizer,
  ) {}

  /**
   * Answers prompts that clients send to this run (`handle.prompt(text)`, a workflow update) until a
   * client closes it (`handle.close()`) or no prompt arrives for `idleTimeoutMs`. Resolves to the
   * number of prompts answered. Inline nothing can reach the run, so it resolves to 0 at once.
   */
  async serve(options: ServeOptions = {}): Promise<number> {
    return this.host ? this.host.serve(options) : 0;
  }

  async session(options: SessionOptions = {}): Promise<Conversation> {
    parseCompactionSettings((options as SessionOptions | undefined)?.compaction);
    const opts = parseWith(sessionOptionsSchema, options, 'session options') as SessionOptions;
    const merged: InitOptions = { ...this.options, ...stripUndefined(opts) };
    // A window the agent set is not looked up (no Models API call); the default model name still is resolved.
    const given = merged.contextWindowTokens;
    const strategy = merged.compaction?.strategy;
    const route = connectionRoute(merged);
    const ports = routedPorts(this.ports, route);
    const resolved = await ports.resolveModel(merged.model, {
      ...(given !== undefined ? { contextWindowTokens: given } : {}),
      // Only a strategy other than the default goes to the runtime (which then looks capabilities up).
      ...(strategy !== undefined && strategy !== 'client' ? { strategy } : {}),
    });
    // The app's own row first (init({ models })); the table's window only where nothing else said one.
    const table = modelInfo(resolved.model, merged.models);
    const own = table.source === 'app' ? merged.models?.[resolved.model]?.contextWindowTokens : undefined;
    const window = merged.contextWindowTokens ?? own ?? resolved.contextWindowTokens ?? builtinContextWindow(resolved.model) ?? table.contextWindowTokens;
    const id = opts.id ?? (this.list.length === 0 ? 'main' : `main-${this.list.length + 1}`);
    const memory = await sessionMemory(ports, merged.compaction, id, resolved.model);
    const offloadBytes = resolveOffloadBytes(merged.compaction, this.flavour === 'default');
    const cwd = sandboxCwd(merged.sandbox) ?? this.defaultCwd;
    const mcpTools = await this.listMcp(merged.mcp ?? [], cwd);
    const session = new Conversation(withOffloadThreshold(ports, offloadBytes), {
      id,
      model: resolved.model,
      maxTokens: merged.maxTokens ?? DEFAULT_MAX_TOKENS,
      // Memory from earlier sessions goes in once, fixed for the session: the prompt cache stays valid.
      system: memory?.initial ? [merged.system, memoryBlock(memory.initial, MEMORY_SYSTEM_HEADING)].filter(Boolean).join('\n\n') : merged.system,
      tools: withReadBack([...resolveTools(merged.tools ?? []), ...mcpTools], merged, offloadBytes),
      cwd,
      // The session's own limit first (either name), then the agent's.
      maxSteps: opts.maxSteps ?? opts.maxTurns ?? this.options.maxSteps ?? this.options.maxTurns ?? DEFAULT_MAX_STEPS,
      compaction: merged.compaction,
      compactionDefaultEnabled: this.flavour === 'default',
      contextWindowTokens: window,
      authorize: this.authorize,
      approver: this.approver,
      ...(this.host?.offeredTools ? { hostTools: this.host.offeredTools.bind(this.host) } : {}),
      cache: promptCache(merged.promptCaching),
      thinking: resolveThinking(merged.thinking),
      hooks: merged.hooks,
      memory: memory?.memory,
      ...(resolved.strategy ? { strategy: resolved.strategy } : {}),
      ...(merged.models ? { models: merged.models } : {}),
      ...(merged.budget ? { budget: merged.budget } : {}),
    });
    this.list.push(session);
    this.routes.set(session, route);
    return session;
  }

  /** The model connection a conversation of this harness calls (undefined: the default, 'anthropic'). */
  connectionOf(session: Conversation): string | undefined {
    return this.routes.get(session)?.connection;
  }

  /**
   * Points a conversation at another connection from its next call on. A session host does this only
   * before the first message (the connection is locked after it: CONNECTION_LOCKED); the model, with
   * its window, is switched by the caller (changeModel) after resolving it on the new connection.
   */
  changeConnection(session: Conversation, connection: string | undefined): void {
    const route = this.routes.get(session);
    if (route) route.connection = connection;
  }

  /** The conversations this harness made, in order (`session()` makes one; the name is the seed API's). */
  conversations(): readonly Conversation[] {
    return this.list;
  }

  /** @deprecated since 0.5.0: conversations(). */
  sessions(): readonly Conversation[] {
    return this.list;
  }

  private async listMcp(servers: McpServerRef[], cwd: string): Promise<ToolDefinition[]> {
    if (servers.length === 0) return [];
    const names = servers.map(mcpServerName);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) throw new DuplicateMcpServerError(twice);
    const list = this.ports.listMcpTools?.bind(this.ports);
    if (!list) throw new RuntimeUnavailableError('this runtime has no MCP client: mcp servers need the inline runtime or a worker');
    // One after another, in the order given: on Temporal each list is an activity, scheduled in a fixed order.
    const defs: ToolDefinition[] = [];
    for (const server of servers) {
      const key = `${JSON.stringify(server)}|${cwd}`;
      let tools = this.mcpTools.get(key);
      if (!tools) {
        tools = list(server, cwd).then((infos) => mcpToolDefinitions(server, infos));
        this.mcpTools.set(key, tools);
      }
      defs.push(...(await tools));
    }
    return defs;
  }
}

export function parseInitOptions(options: unknown): InitOptions {
  // Compaction settings first, so a bad one is InvalidCompactionSettingsError whichever way it came in.
  parseCompactionSettings((options as InitOptions | undefined)?.compaction);
  return parseWith(initOptionsSchema, options ?? {}, 'init options') as InitOptions;
}

const MEMORY_SYSTEM_HEADING = '## Memory from earlier sessions';

/**
 * The session's memory when compaction.memory is on and the runtime keeps memory files: the stored
 * file (if any) is loaded once, for the system prompt, and the memory starts from it.
 */
async function sessionMemory(
  ports: RuntimePorts,
  compaction: CompactionSettings | undefined,
  sessionId: string,
  model: string,
): Promise<{ memory: PortMemory; initial: string | undefined } | undefined> {
  const port = ports.memory;
  const settings = port ? resolveMemorySettings(compaction?.memory, port.agentName) : undefined;
  if (!port || !settings) return undefined;
  const initial = (await port.load(settings.key))?.text.trim() || undefined;
  return { memory: new PortMemory(port, settings, { sessionId, model: () => model }, initial), initial };
}

/** A session's route: its connection (the session's, else the agent's) and where its summaries go. */
function connectionRoute(options: InitOptions): ConnectionRoute {
  const summary = options.compaction?.summaryConnection;
  return new ConnectionRoute(options.connection, summary ? { connection: summary, ...(options.compaction?.summaryModel ? { model: options.compaction.summaryModel } : {}) } : undefined);
}

function promptCache(option: InitOptions['promptCaching']): ConversationConfig['cache'] {
  if (!option) return undefined;
  return { ttl: (option === true ? undefined : option.ttl) ?? '5m' };
}

/**
 * Offloaded outputs and capped results name where the full output is (the worker's store on Temporal,
 * the run's memory inline): the model gets the tool that reads it back. A session without tools has
 * no output to read back, and gets nothing.
 */
function withReadBack(tools: ToolDefinition[], options: InitOptions, offloadBytes: number | undefined): ToolDefinition[] {
  const capping = options.compaction?.toolResults?.maxTokens !== undefined;
  if (tools.length === 0 || (!capping && offloadBytes === undefined) || tools.some((t) => t.name === READ_ARTIFACT)) return tools;
  return [...tools, builtinTools.read_artifact];
}

/**
 * The ports a session runs on, with its artifact threshold on every tool call: the runtime (the tool
 * activity on Temporal) decides on offloading and, on Temporal, records the decision in the result.
 */
function withOffloadThreshold(ports: RuntimePorts, offloadBytes: number | undefined): RuntimePorts {
  if (offloadBytes === undefined) return ports;
  return { ...ports, runTool: (call, def) => ports.runTool({ ...call, offloadBytes }, def) };
}

function resolveTools(refs: Array<ToolDefinition | string>): ToolDefinition[] {
  return refs.map((ref) => {
    if (ref === READ_ARTIFACT_ALIAS) return builtinTools.read_artifact;
    return typeof ref === 'string' && isBuiltinToolName(ref) ? builtinTools[ref] : (ref as ToolDefinition);
  });
}

function sandboxCwd(sandbox: InitOptions['sandbox']): string | undefined {
  return typeof sandbox === 'object' ? sandbox.cwd : undefined;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** True when the user turned compaction off explicitly (the only thing that silences the Temporal warning). */
export function compactionExplicitlyDisabled(options: InitOptions): boolean {
  return options.compaction?.enabled === false;
}

export const TEMPORAL_COMPACTION_WARNING =
  "[fabric-harness] runtime 'temporal' with the default import: auto-compaction is on, and it is decided at run time. " +
  "Decisions are recorded in history so replays follow them, but for a conversation that must be exact, import from '@fabric-harness/sdk/strict' or pass compaction: { enabled: false }.";
