import { bundleWorkflowCode, type NativeConnection, Worker, type LogLevel, type WorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import type { ModelConnection } from '../activities/models/anthropic/messages';
import type { ToolSandboxOptions } from '../activities/tools/tool-env';
import type { Telemetry } from '../activities/telemetry/telemetry-setup';
import type { WorkerCacheSizes } from '../activities/create-activities';
import type { TranscriptStore } from '../activities/stores/transcript-store';
import type { EventListener } from '../core/events';
import type { ToolSource } from '../core/tool-registry';
import { resolveAgentModules, writeWorkflowEntry } from './bundle';
import { bundlerLogger } from './bundler-logger';
import { ensureQuietRuntime } from './runtime-logging';
import { FabricHarnessPlugin, type FabricHarnessPluginOptions } from './plugin';
import { collectToolCode } from './tool-code';
import { connectWorker } from './connect-worker';
import { chooseSessionCache } from './session-cache';
import type { ConnectionFlags } from '../client/connection';

import { DEFAULT_TASK_QUEUE } from '../client/start';

export { DEFAULT_TASK_QUEUE };

export interface CreateWorkerOptions
  extends Omit<WorkerOptions, 'connection' | 'taskQueue' | 'workflowsPath' | 'workflowBundle' | 'activities'> {
  /**
   * Module(s) whose exports are agent definitions (default export, named exports or arrays): a path
   * (relative to the working directory), or a `file:` URL, e.g. `new URL('./agents.js', import.meta.url)`
   * in an ES module (`require.resolve('./agents')` in CommonJS).
   */
  agents: string | URL | Array<string | URL>;
  /**
   * Tool code: implement() results, tools with execute, or paths of modules that export them. Tools
   * with execute that the agent modules export (or list in agent({ tools })) are found without this.
   */
  tools?: Array<ToolSource | string>;
  /**
   * A connection to Temporal. Default: one this worker opens (and closes when it stops) from `connect`,
   * the TEMPORAL_* environment and the Temporal config file's profile (TEMPORAL_CONFIG_FILE /
   * TEMPORAL_PROFILE): address, namespace, TLS, API key, as `fh` resolves them.
   */
  connection?: NativeConnection;
  /** Settings that win over the environment when no `connection` is given (e.g. `{ profile: 'prod' }`). */
  connect?: ConnectionFlags;
  taskQueue?: string;
  /** Anthropic settings for this worker (default: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL). */
  model?: ModelConnection & { defaultModel?: string };
  /** Model connections by name, besides the built-in ones: see FabricHarnessPluginOptions.connections. */
  connections?: FabricHarnessPluginOptions['connections'];
  /** The live path on a broker (Redis Streams): see FabricHarnessPluginOptions.liveBroker. */
  liveBroker?: FabricHarnessPluginOptions['liveBroker'];
  store?: TranscriptStore;
  /** How bash runs on this worker: see FabricHarnessPluginOptions.toolSandbox. */
  toolSandbox?: ToolSandboxOptions;
  /** MCP servers agents may name in `init({ mcp: ['name'] })`: see FabricHarnessPluginOptions.mcpServers. */
  mcpServers?: FabricHarnessPluginOptions['mcpServers'];
  /** OpenTelemetry tracing (off by default): `createTelemetry({ endpoint })`; its workflow interceptors are bundled in. */
  telemetry?: Telemetry;
  /**
   * The harness's in-memory cache sizes (transcripts, token counts). Temporal's workflow cache is
   * `maxCachedWorkflows`, which bounds how many runs keep their conversations in memory: set here from
   * `sessionCacheMemory` unless given (docs/deploying.md, "Sizing a worker").
   */
  caches?: WorkerCacheSizes;
  offloadThresholdBytes?: number;
  /** Worker memory idle cached sessions may hold (bytes, or a share of memory; default 0.2): see FabricHarnessPluginOptions.sessionCacheMemory. */
  sessionCacheMemory?: number;
  /** What happens to a run whose workflow task needs a blob the store proved absent: see FabricHarnessPluginOptions.missingBlobReaper. */
  missingBlobReaper?: FabricHarnessPluginOptions['missingBlobReaper'];
  onEvent?: EventListener;
  /** A bundle made earlier with bundleAgents() for the same agent modules (skips bundling, ~seconds). */
  workflowBundle?: WorkflowBundle;
  /** The lowest level of the bundler's log that reaches the runtime logger; 'INFO' shows webpack's build report. Default 'WARN'. */
  bundlerLogLevel?: LogLevel;
}

/**
 * A Temporal worker that runs the given agents, with the harness plugin installed. The agent modules
 * are bundled as workflow code, and also loaded here in Node, once, to find tool code; a tool an agent
 * declares (agent({ tools })) without code on this worker fails startup with TOOL_NOT_REGISTERED.
 */
export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  const {
    agents,
    tools,
    connection,
    connect,
    taskQueue,
    model,
    store,
    offloadThresholdBytes,
    missingBlobReaper,
    onEvent,
    workflowBundle,
    bundlerLogLevel,
    toolSandbox,
    mcpServers,
    telemetry,
    caches,
    connections,
    liveBroker,
    sessionCacheMemory,
    plugins,
    bundlerOptions,
    interceptors,
    ...rest
  } = options;
  // A bad sessionCacheMemory or maxCachedWorkflows fails at once, not after bundling (the plugin applies them).
  chooseSessionCache({ maxCachedWorkflows: rest.maxCachedWorkflows, sessionCacheMemory });
  ensureQuietRuntime('INFO'); // one line per entry, as `fh worker` prints; an application's own runtime wins
  const agentFiles = resolveAgentModules(agents);
  const toolCode = collectToolCode(agentFiles, tools ?? []);
  const plugin = new FabricHarnessPlugin({ tools: toolCode, model, ...(connections ? { connections } : {}), ...(liveBroker ? { liveBroker } : {}), store, offloadThresholdBytes, missingBlobReaper, onEvent, toolSandbox, mcpServers, caches, agents: agentFiles, ...(sessionCacheMemory !== undefined ? { sessionCacheMemory } : {}), ...(rest.showStackTraceSources ? { showStackTraceSources: true } : {}) });
  const allPlugins = [plugin, ...(telemetry ? [telemetry.plugin] : []), ...(plugins ?? [])];
  // Bundled here rather than by Worker.create so the bundler gets its own, quiet logger.
  const bundle =
    workflowBundle ??
    (await bundleWorkflowCode({
      workflowsPath: await writeWorkflowEntry(agentFiles),
      logger: bundlerLogger(bundlerLogLevel),
      plugins: allPlugins,
      workflowInterceptorModules: interceptors?.workflowModules,
      payloadConverterPath: rest.dataConverter?.payloadConverterPath,
      failureConverterPath: rest.dataConverter?.failureConverterPath,
      ignoreModules: bundlerOptions?.ignoreModules,
      preloadModules: bundlerOptions?.preloadModules,
      webpackConfigHook: bundlerOptions?.webpackConfigHook,
    }));
  const owned = connection ? undefined : await connectWorker(connect ?? {});
  let worker: Worker;
  try {
    worker = await Worker.create({
      ...rest,
      ...(interceptors ? { interceptors: { ...interceptors, workflowModules: undefined } } : {}),
      connection: connection ?? owned!.connection,
      namespace: rest.namespace ?? owned?.namespace ?? connect?.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: taskQueue ?? DEFAULT_TASK_QUEUE,
      plugins: allPlugins,
      workflowBundle: bundle,
    });
  } catch (err) {
    await owned?.connection.close().catch(() => undefined);
    throw err;
  }
  if (owned) closeWhenStopped(worker, owned.connection);
  return worker;
}

/** A connection this function opened is this worker's: closed once run() ends (Worker.create closes only its own). */
function closeWhenStopped(worker: Worker, connection: NativeConnection): void {
  const run = worker.run.bind(worker);
  worker.run = async () => {
    try {
      return await run();
    } finally {
      await connection.close().catch(() => undefined);
    }
  };
}
