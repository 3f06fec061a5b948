import { patched, type ActivityOptions } from '@temporalio/workflow';
import { mcpServerName, mcpStateLostNote, type McpServerRef } from '../core/mcp';
import { MCP_PIN_WAIT, type McpPinResult } from '../wire/mcp-pin';
import type { ToolActivityResult } from '../wire/activity-contract';
import { isScheduleToStartTimeout } from './schedule-to-start';

/**
 * Since this patch a run pins each stateful MCP server's connection to one worker (wire/mcp-pin.ts):
 * an `fhMcpPin` activity before the server's tool list, whose answer (a task queue) is in history.
 */
export const MCP_PIN_PATCH = 'fh-mcp-pin';
/**
 * Since this patch a session's continued run starts with the pins its previous run had (carried by
 * continue-as-new), so its calls reach the same connection (same worker, same workflow id): no `fhMcpPin`
 * for a server pinned before. Earlier runs pinned again, and could land on another worker.
 */
export const MCP_PIN_CARRIED_PATCH = 'fh-mcp-pin-carried';

/**
 * Which worker owns a stateful MCP connection: answered at once by any worker that takes it (plus the
 * run's retry policy). So a short bound: a worker that dies holding the pin costs that long, and a
 * minute here was a minute of a session doing nothing.
 */
export const MCP_PIN_OPTIONS: Pick<ActivityOptions, 'startToCloseTimeout'> = { startToCloseTimeout: '10 seconds' };

/**
 * How a session hands MCP pins across continue-as-new: the previous run's pins (server name to task
 * queue), and where the ports report how to read the current ones.
 */
export interface CarriedMcpPins {
  carried: Readonly<Record<string, string>>;
  expose(pins: () => Record<string, string>): void;
}

/** A run does not chase workers forever: past this many lost workers in a row, the error stands. */
const MAX_REPINS = 3;

export interface McpPinDeps {
  /** Runs `fhMcpPin` where the run's tool calls go (any worker with the run's tools may own the connection). */
  pin(server: McpServerRef): Promise<McpPinResult>;
}

/** What a pinned activity is scheduled with: extra options (none: unpinned). */
export type PinnedOptions = Pick<ActivityOptions, 'taskQueue' | 'scheduleToStartTimeout'>;

/**
 * A run's pins, by server name. Its state comes from history only (pin results, timeouts), so a replay
 * routes every call exactly as the first execution did.
 */
export class McpPinning {
  private readonly queues = new Map<string, string | undefined>();

  /** `carried`: the previous run's pins (server name to task queue), used instead of pinning again. */
  constructor(
    private readonly deps: McpPinDeps,
    private readonly carried: Readonly<Record<string, string>> = {},
  ) {}

  /** Lists a server's tools: pins a stateful server first (the list opens the connection there). */
  async list<T>(server: McpServerRef, run: (pin: PinnedOptions) => Promise<T>): Promise<T> {
    const name = mcpServerName(server);
    const declaredStateless = typeof server !== 'string' && server.stateful === false;
    if (!declaredStateless && !this.queues.has(name) && patched(MCP_PIN_PATCH)) {
      // A worker gone since is found as any lost owner is: the list waits MCP_PIN_WAIT, then pins again.
      const carried = Object.hasOwn(this.carried, name) ? this.carried[name] : undefined;
      this.queues.set(name, carried !== undefined && patched(MCP_PIN_CARRIED_PATCH) ? carried : ((await this.deps.pin(server)).taskQueue ?? undefined));
    }
    return (await this.pinned(server, run)).value;
  }

  /** The pins this run holds now (server name to task queue), for a continue-as-new to carry. */
  pins(): Record<string, string> {
    const pins: Record<string, string> = {};
    for (const [name, queue] of this.queues) if (queue !== undefined) pins[name] = queue;
    return pins;
  }

  /**
   * Calls a tool on a server: on its pinned queue when it has one. `lost` names the queue of a worker
   * that was gone when the call came (the call then ran on a new connection on another worker).
   */
  call<T>(server: McpServerRef, run: (pin: PinnedOptions) => Promise<T>): Promise<{ value: T; lost?: string }> {
    return this.pinned(server, run);
  }

  /** A tool call whose result, after a lost worker, begins with the note saying so. */
  async callTool(server: McpServerRef, run: (pin: PinnedOptions) => Promise<ToolActivityResult>): Promise<ToolActivityResult> {
    const { value, lost } = await this.call(server, run);
    // The note makes the result longer than the stored content: it goes inline, not by reference.
    return lost ? { ...value, content: connectionLostNote(mcpServerName(server)) + value.content, contentRef: undefined } : value;
  }

  private async pinned<T>(server: McpServerRef, run: (pin: PinnedOptions) => Promise<T>): Promise<{ value: T; lost?: string }> {
    const name = mcpServerName(server);
    let lost: string | undefined;
    for (let attempt = 0; ; attempt++) {
      const taskQueue = this.queues.get(name);
      if (taskQueue === undefined) return { value: await run({}), ...(lost ? { lost } : {}) };
      try {
        return { value: await run({ taskQueue, scheduleToStartTimeout: MCP_PIN_WAIT }), ...(lost ? { lost } : {}) };
      } catch (err) {
        if (!isScheduleToStartTimeout(err) || attempt >= MAX_REPINS) throw err;
        // Its worker is gone (killed, shut down): another one owns the connection from now on.
        lost ??= taskQueue;
        this.queues.set(name, (await this.deps.pin(server)).taskQueue ?? undefined);
      }
    }
  }
}

/** What the model reads first in a result that ran on a new connection. */
export function connectionLostNote(server: string): string {
  return mcpStateLostNote(server, "the worker that held this run's connection to it is gone, so this call ran on a new connection on another worker");
}
