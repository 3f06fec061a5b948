import { parseAgentInput, type AgentDefinition, type InitFn, type InvokeOptions } from '../core/agent';
import { statSync } from 'node:fs';
import { InvalidInputError, RuntimeUnavailableError, ToolNotRegisteredError } from '../core/errors';
import type { RuntimePorts } from '../core/ports';
import { deniedCallText, type ToolAuthorizer } from '../core/conversation';
import { ToolRegistry } from '../core/tool-registry';
import { Harness, parseInitOptions, type Flavour, type InitOptions } from '../core/harness';
import { warnIfTemporalWithCompaction } from './warnings';
import { createInlinePorts, type InlinePorts } from './ports';
import { parseInvokeOptions } from './invoke-options';
import { inlineSubAgents, type NestedInvokeOptions } from './sub-agents';
import type { AgentEvent } from '../core/events';
import type { ModelConnectionSettings } from '../activities/models/connections';

/** `agent.invoke(input)`: runs `run` in this process against the model named by options or the environment. */
export async function invokeInline(def: AgentDefinition, input: unknown, options: NestedInvokeOptions = {}): Promise<unknown> {
  parseInvokeOptions(options);
  const parsed = parseAgentInput(def, input);
  checkDeclaredTools(def, options);
  const opened: InlinePorts[] = [];
  try {
    return await def.run({ init: inlineInit(def.flavour, options, plainHarness, def.name, opened), input: parsed });
  } finally {
    // The run's MCP connections (stdio servers are child processes) end with it.
    await Promise.all(opened.map((p) => p.close()));
  }
}

/** Tools the agent declares must have code before the run starts, not when the model first calls them. */
export function checkDeclaredTools(def: AgentDefinition, options: InvokeOptions): void {
  const missing = ToolRegistry.from([def.tools ?? [], options.tools ?? []]).missing(def.tools ?? []);
  if (missing.length > 0) throw new ToolNotRegisteredError(missing[0]!, 'inline');
}

function requireDirectory(dir: string, what: string, field: string): void {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // missing or unreadable: said below
  }
  if (!isDir) throw new InvalidInputError(what, field, [{ path: field, message: `directory ${dir} does not exist; create it first (it is not created for you)` }]);
}

/** Makes the harness `init()` returns; inline sessions make one that serves prompts (see ./sessions). */
export type HarnessFactory = (ports: RuntimePorts, options: InitOptions, flavour: Flavour, cwd: string, approver?: ToolAuthorizer) => Harness;

const plainHarness: HarnessFactory = (ports, options, flavour, cwd, approver) => new Harness(ports, options, flavour, cwd, undefined, undefined, approver);

/** invoke's onApproval as the harness's approver: true, false or { approved, note }; a throw denies. */
function approverFrom(onApproval: InvokeOptions['onApproval']): ToolAuthorizer | undefined {
  if (!onApproval) return undefined;
  return async (call) => {
    let answer: Awaited<ReturnType<NonNullable<InvokeOptions['onApproval']>>>;
    try {
      answer = await onApproval({ callId: call.id, tool: call.name, input: call.input });
    } catch (err) {
      return { allow: false, content: deniedCallText(call.name, `the approver failed: ${err instanceof Error ? err.message : String(err)}`) };
    }
    const approved = typeof answer === 'boolean' ? answer : answer?.approved === true;
    const note = typeof answer === 'object' && answer !== null ? answer.note : undefined;
    return approved ? { allow: true } : { allow: false, content: deniedCallText(call.name, note) };
  };
}

export function inlineInit(
  flavour: Flavour,
  defaults: NestedInvokeOptions = {},
  makeHarness: HarnessFactory = plainHarness,
  agentName?: string,
  /** Collects the ports made, for the caller to close when the run ends. */
  opened?: InlinePorts[],
): InitFn {
  return async (raw?: InitOptions) => {
    const parsed = parseInitOptions(raw);
    // A sub-agent runs on its parent's connection unless its own init names one.
    const options = defaults.fhConnection !== undefined && parsed.connection === undefined ? { ...parsed, connection: defaults.fhConnection } : parsed;
    warnIfTemporalWithCompaction(flavour, options);
    if (options.runtime === 'temporal') {
      throw new RuntimeUnavailableError(
        "runtime 'temporal' runs inside an agent workflow: start the agent with startAgent() (or `fh run`) against a worker. Here, outside a workflow, use runtime 'inline' or leave it out.",
      );
    }
    // The sandbox directory must exist: creating it would make a typo's directory anywhere (as root, anywhere at all).
    const sandboxCwd = typeof options.sandbox === 'object' ? options.sandbox.cwd : undefined;
    if (sandboxCwd !== undefined) requireDirectory(sandboxCwd, 'init options', 'sandbox.cwd');
    else if (defaults.cwd !== undefined) requireDirectory(defaults.cwd, 'invoke options', 'cwd');
    const onEvent = options.onEvent ?? defaults.onEvent;
    const tools = ToolRegistry.from(defaults.tools ?? []);
    const emit = (event: AgentEvent) => onEvent?.(event);
    const ports = createInlinePorts({
      subAgents: inlineSubAgents(defaults, invokeInline, emit),
      apiKey: defaults.apiKey,
      baseURL: defaults.baseURL,
      ...(defaults.connections ? { connections: defaults.connections as Record<string, ModelConnectionSettings> } : {}),
      model: defaults.model,
      onEvent,
      tools,
      signal: defaults.signal,
      agentName,
      memoryDir: defaults.memoryDir,
      toolSandbox: defaults.toolSandbox,
      mcpServers: defaults.mcpServers,
    });
    opened?.push(ports);
    return makeHarness(ports, options, flavour, defaults.cwd ?? process.cwd(), approverFrom(defaults.onApproval));
  };
}
