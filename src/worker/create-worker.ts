import { NativeConnection, Worker, type WorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import type { ModelConnection } from '../activities/anthropic';
import type { ToolSandboxOptions } from '../activities/tool-env';
import type { TranscriptStore } from '../activities/transcript-store';
import type { EventListener } from '../core/events';
import type { ToolDefinition } from '../core/tools';
import { workflowsPathFor } from './bundle';
import { FabricHarnessPlugin } from './plugin';

import { DEFAULT_TASK_QUEUE } from '../client/start';

export { DEFAULT_TASK_QUEUE };

export interface CreateWorkerOptions
  extends Omit<WorkerOptions, 'connection' | 'taskQueue' | 'workflowsPath' | 'workflowBundle' | 'activities'> {
  /** Module path(s) whose exports are agent definitions (default export, named exports or arrays). */
  agents: string | string[];
  tools?: ToolDefinition[];
  /** A connection to Temporal; default: connect to TEMPORAL_ADDRESS (or localhost:7233). */
  connection?: NativeConnection;
  taskQueue?: string;
  /** Anthropic settings for this worker (default: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL). */
  model?: ModelConnection & { defaultModel?: string };
  store?: TranscriptStore;
  /** How bash runs on this worker: see FabricHarnessPluginOptions.toolSandbox. */
  toolSandbox?: ToolSandboxOptions;
  offloadThresholdBytes?: number;
  onEvent?: EventListener;
  /** A bundle made earlier with bundleAgents() for the same agent modules (skips bundling, ~seconds). */
  workflowBundle?: WorkflowBundle;
}

/** A Temporal worker that runs the given agents, with the harness plugin installed. */
export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  const { agents, tools, connection, taskQueue, model, store, offloadThresholdBytes, onEvent, workflowBundle, plugins, toolSandbox, ...rest } =
    options;
  const plugin = new FabricHarnessPlugin({ tools, model, store, offloadThresholdBytes, onEvent, toolSandbox });
  return Worker.create({
    ...rest,
    connection: connection ?? (await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' })),
    namespace: rest.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: taskQueue ?? DEFAULT_TASK_QUEUE,
    plugins: [plugin, ...(plugins ?? [])],
    ...(workflowBundle ? { workflowBundle } : { workflowsPath: await workflowsPathFor(agents) }),
  });
}
