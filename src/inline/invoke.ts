import { parseAgentInput, type AgentDefinition, type InitFn, type InvokeOptions } from '../core/agent';
import { RuntimeUnavailableError, ToolNotRegisteredError } from '../core/errors';
import type { RuntimePorts } from '../core/ports';
import { ToolRegistry } from '../core/tool-registry';
import { Harness, parseInitOptions, type Flavour, type InitOptions } from '../core/harness';
import { warnIfTemporalWithCompaction } from './warnings';
import { createInlinePorts, type InlinePorts } from './ports';
import { inlineSubAgents, type NestedInvokeOptions } from './sub-agents';
import type { AgentEvent } from '../core/events';

/** `agent.invoke(input)`: runs `run` in this process against the model named by options or the environment. */
export async function invokeInline(def: AgentDefinition, input: unknown, options: NestedInvokeOptions = {}): Promise<unknown> {
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

/** Makes the harness `init()` returns; inline sessions make one that serves prompts (see ./sessions). */
export type HarnessFactory = (ports: RuntimePorts, options: InitOptions, flavour: Flavour, cwd: string) => Harness;

const plainHarness: HarnessFactory = (ports, options, flavour, cwd) => new Harness(ports, options, flavour, cwd);

export function inlineInit(
  flavour: Flavour,
  defaults: NestedInvokeOptions = {},
  makeHarness: HarnessFactory = plainHarness,
  agentName?: string,
  /** Collects the ports made, for the caller to close when the run ends. */
  opened?: InlinePorts[],
): InitFn {
  return async (raw?: InitOptions) => {
    const options = parseInitOptions(raw);
    warnIfTemporalWithCompaction(flavour, options);
    if (options.runtime === 'temporal') {
      throw new RuntimeUnavailableError(
        "runtime 'temporal' runs inside an agent workflow: start the agent with startAgent() (or `fh run`) against a worker. Here, outside a workflow, use runtime 'inline' or leave it out.",
      );
    }
    const onEvent = options.onEvent ?? defaults.onEvent;
    const tools = ToolRegistry.from(defaults.tools ?? []);
    const emit = (event: AgentEvent) => onEvent?.(event);
    const ports = createInlinePorts({
      subAgents: inlineSubAgents(defaults, invokeInline, emit),
      apiKey: defaults.apiKey,
      baseURL: defaults.baseURL,
      model: defaults.model,
      onEvent,
      tools,
      signal: defaults.signal,
      agentName,
      memoryDir: defaults.memoryDir,
      mcpServers: defaults.mcpServers,
    });
    opened?.push(ports);
    return makeHarness(ports, options, flavour, defaults.cwd ?? process.cwd());
  };
}
