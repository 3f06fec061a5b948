import { isAgentDefinition } from './agent';
import { isBuiltinToolName } from './builtin-tools';
import { FabricError } from './errors';
import { isToolDefinition, isToolImplementation, type ToolDefinition, type ToolExecute } from './tools';

export type { ToolSource } from './tools';

export class DuplicateToolImplementationError extends FabricError {
  constructor(readonly tool: string) {
    super(
      'DUPLICATE_TOOL_IMPLEMENTATION',
      `two different implementations of tool '${tool}' were given (implement() or tool({ execute }) in the loaded modules); keep one`,
    );
  }
}

/**
 * The tool code one worker (or one inline run) has, by tool name: collected once from what it is
 * given. Declarations without `execute` carry no code and are skipped; the same object seen twice
 * (a tool exported by two modules) is fine.
 */
export class ToolRegistry {
  private readonly byName = new Map<string, ToolExecute>();

  /**
   * Collects tool code from values: implementations, tools with execute, arrays, module namespaces of
   * them, and the `tools` agents declare (so a tool with execute used by an exported agent is found).
   */
  static from(values: readonly unknown[]): ToolRegistry {
    const registry = new ToolRegistry();
    const seen = new Set<unknown>();
    const visit = (v: unknown, inModule: boolean): void => {
      if (typeof v !== 'object' || v === null || seen.has(v)) return;
      seen.add(v);
      if (isToolImplementation(v)) registry.add(v.name, v.execute);
      else if (isAgentDefinition(v)) visit(v.tools ?? [], true);
      else if (isToolDefinition(v)) {
        if (typeof v.execute === 'function') registry.add(v.name, v.execute);
      } else if (Array.isArray(v)) v.forEach((x) => visit(x, inModule));
      // A module's exports, one level deep: not arbitrary objects inside them.
      else if (!inModule) Object.values(v).forEach((x) => visit(x, true));
    };
    for (const v of values) visit(v, false);
    return registry;
  }

  private add(name: string, execute: ToolExecute): void {
    const prior = this.byName.get(name);
    if (prior && prior !== execute) throw new DuplicateToolImplementationError(name);
    this.byName.set(name, execute);
  }

  get(name: string): ToolExecute | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Declared tools (non built-in) this registry has no code for. */
  missing(declared: readonly ToolDefinition[]): string[] {
    return [...new Set(declared.map((t) => t.name))].filter((n) => !this.byName.has(n) && !isBuiltinToolName(n));
  }
}
