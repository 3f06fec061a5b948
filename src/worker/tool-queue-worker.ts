import { Worker, type Logger, type WorkerOptions } from '@temporalio/worker';
import { collectAgents, NON_AGENT_WORKFLOW_TYPES } from '../workflows';
import { agentSetKey, toolTaskQueue } from '../wire/tool-queue';
import { loadModule } from './load-modules';

/** A worker's tool queue (wire/tool-queue.ts) and the options its activity worker is made from. */
export interface ToolQueuePlan {
  taskQueue: string;
  options: WorkerOptions;
}

/**
 * The tool queue of the worker these options make: from the agent modules given, else from a
 * `workflowsPath` made by workflowsPathFor (required here: it exports one workflow per agent, and
 * `default`). undefined when neither says which agents it runs.
 */
export function toolQueueOf(options: WorkerOptions, agents: string | string[] | undefined): ToolQueuePlan | undefined {
  const names = agents !== undefined ? agentNames(agents) : options.workflowsPath ? entryAgentNames(options.workflowsPath) : undefined;
  if (!names || names.length === 0) return undefined;
  return { taskQueue: toolTaskQueue(options.taskQueue, agentSetKey(names)), options };
}

function agentNames(agents: string | string[]): string[] {
  const modules = (Array.isArray(agents) ? agents : [agents]).map((f) => loadModule(f, 'agents'));
  return collectAgents(modules).map((a) => a.name);
}

function entryAgentNames(workflowsPath: string): string[] | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const entry = require(workflowsPath) as Record<string, unknown>;
    return Object.keys(entry).filter((k) => !NON_AGENT_WORKFLOW_TYPES.includes(k) && typeof entry[k] === 'function');
  } catch {
    return undefined; // not one of ours (or not loadable in Node): the workflow falls back after a wait
  }
}

export interface RunningToolWorker {
  stop(): Promise<void>;
  /** Throws what stopped the tool worker on its own, if anything did. */
  rethrow(): void;
}

/**
 * Starts the activity-only worker of a tool queue: the same connection, namespace, activities, data
 * converter (external storage) and activity interceptors as the worker it serves. If it fails, `onFail`
 * stops that worker too: a worker that silently stopped taking its runs' tool calls would strand them.
 */
export async function startToolWorker(plan: ToolQueuePlan, onFail: () => void): Promise<RunningToolWorker> {
  const o = plan.options;
  const worker = await Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: plan.taskQueue,
    activities: o.activities,
    dataConverter: o.dataConverter,
    ...(o.interceptors?.activity ? { interceptors: { activity: o.interceptors.activity } } : {}),
    ...(o.identity ? { identity: `${o.identity} (tools)` } : {}),
    ...(o.maxConcurrentActivityTaskExecutions !== undefined ? { maxConcurrentActivityTaskExecutions: o.maxConcurrentActivityTaskExecutions } : {}),
    ...(o.shutdownGraceTime !== undefined ? { shutdownGraceTime: o.shutdownGraceTime } : {}),
    // Tool calls stream their output lines in heartbeat details, as the model calls do on the main worker.
    ...(o.maxHeartbeatThrottleInterval !== undefined ? { maxHeartbeatThrottleInterval: o.maxHeartbeatThrottleInterval } : {}),
  });
  quietNoWorkflowsWarning(worker);
  let failure: unknown;
  const running = worker.run().catch((err) => {
    failure = err;
    onFail();
  });
  return {
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
    rethrow() {
      if (failure !== undefined) throw failure;
    },
  };
}

/**
 * A tool queue's worker runs activities only, by design, and Temporal warns at start that it registered
 * no workflows. That warning reads like a fault in every worker's log (and the demo's), so this worker's
 * logger drops that one line; every other line goes through unchanged.
 */
function quietNoWorkflowsWarning(worker: Worker): void {
  const holder = worker as unknown as { logger: Logger };
  const inner = holder.logger;
  if (!inner || typeof inner.warn !== 'function') return; // the SDK changed shape: keep its logger as is
  const quiet: Logger = {
    log: (level, message, meta) => inner.log(level, message, meta),
    trace: (message, meta) => inner.trace(message, meta),
    debug: (message, meta) => inner.debug(message, meta),
    info: (message, meta) => inner.info(message, meta),
    warn: (message, meta) => {
      if (message === NO_WORKFLOWS_WARNING) return;
      inner.warn(message, meta);
    },
    error: (message, meta) => inner.error(message, meta),
  };
  Object.defineProperty(holder, 'logger', { value: quiet });
}

const NO_WORKFLOWS_WARNING = 'No workflows registered, not polling for workflow tasks';
