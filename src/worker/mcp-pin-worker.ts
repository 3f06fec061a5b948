import * as os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { WorkerOptions } from '@temporalio/worker';
import { mcpPinTaskQueue } from '../wire/mcp-pin';
import { startActivityWorker, type RunningToolWorker } from './tool-queue-worker';

/**
 * The pinned MCP queues of the workers one plugin runs (wire/mcp-pin.ts): for each running worker, an
 * activity-only worker on a task queue only it polls, started the first time a run pins a stateful MCP
 * server to it (a worker whose agents use no MCP server polls no extra queue). Its activities are the
 * worker's own, so a call there reaches the same MCP connections as the worker's other calls.
 */
export class McpPinQueues {
  /** The options of each running worker, by every queue it serves (its own, its tool queue). */
  private readonly serving = new Map<string, { options: WorkerOptions; onFail: () => void }>();
  private readonly started = new Map<WorkerOptions, Promise<{ taskQueue: string; worker: RunningToolWorker }>>();

  /** Registers a running worker; `onFail` stops it if its pinned queue's worker fails. */
  serve(queues: string[], options: WorkerOptions, onFail: () => void): void {
    for (const q of queues) this.serving.set(q, { options, onFail });
  }

  /** The pinned queue of the worker serving `servedQueue`, started now if it is not yet. */
  async queueFor(servedQueue: string): Promise<string | undefined> {
    const serving = this.serving.get(servedQueue);
    if (!serving) return undefined;
    let started = this.started.get(serving.options);
    if (!started) {
      const identity = serving.options.identity ?? `${process.pid}@${os.hostname()}`;
      const taskQueue = mcpPinTaskQueue(serving.options.taskQueue, identity, randomUUID().slice(0, 8));
      started = startActivityWorker(serving.options, taskQueue, 'mcp', serving.onFail).then((worker) => ({ taskQueue, worker }));
      this.started.set(serving.options, started);
      started.catch(() => this.started.delete(serving.options));
    }
    return (await started).taskQueue;
  }

  /** Stops the pinned queue of a worker that stops (before its MCP connections close). */
  async stop(queues: string[]): Promise<void> {
    const options = queues.map((q) => this.serving.get(q)?.options).find((o) => o !== undefined);
    for (const q of queues) this.serving.delete(q);
    const started = options ? this.started.get(options) : undefined;
    if (!options || !started) return;
    this.started.delete(options);
    const { worker } = await started.catch(() => ({ worker: undefined }));
    await worker?.stop();
    worker?.rethrow();
  }
}
