import type { DataConverter } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import { Runtime, type Worker, type BundleOptions, type ReplayWorkerOptions, type WorkerOptions, type InjectedSinks } from '@temporalio/worker';
import { createActivities } from '../activities/create-activities';
import type { ModelConnection } from '../activities/models/anthropic/messages';
import type { ModelConnectionSettings } from '../activities/models/connections';
import { RedisLivePublisher } from '../activities/stream/redis-broker';
import type { LiveBrokerSettings } from '../wire/live-broker';
import { externalStorageFor } from '../activities/stores/external-storage';
import { createFlowActivities } from '../activities/flow-activities';
import { resolveToolSandbox, type ToolSandboxOptions } from '../activities/tools/tool-env';
import { McpConnections } from '../activities/mcp/connections';
import { mcpServerConfigSchema, type McpHttpServer, type McpServerConfig, type McpStdioServer } from '../core/mcp';
import { parseWith } from '../core/validate';
import type { WorkerCacheSizes } from '../activities/create-activities';
import { FileTranscriptStore, type TranscriptStore } from '../activities/stores/transcript-store';
import type { EventListener } from '../core/events';
import { ToolRegistry, type ToolSource } from '../core/tool-registry';
import type { FabricSinks } from '../workflows/sinks';
import { configureAgentBundler } from './bundle';
import { loadSources } from './load-modules';
import { toolQueueOf, startToolWorker, type RunningToolWorker, type ToolQueuePlan } from './tool-queue-worker';
import { McpPinQueues } from './mcp-pin-worker';
import { MissingBlobReaper, type MissingBlobReaperOptions } from './missing-blob-reaper';
import { chooseSessionCache } from './session-cache';

export interface FabricHarnessPluginOptions {
  /**
   * Bundles made with this plugin keep Temporal's full source map, the sources' text and columns (see
   * configureAgentBundler): the worker shows the text in the enhanced stack trace. Taken from the worker's own `showStackTraceSources`
   * when Temporal bundles; `createWorker`, which bundles before the worker exists, passes it here.
   * @internal
   */
  showStackTraceSources?: boolean;
  /**
   * Code of the custom tools the agents use (built-ins are always there): implement() results, tools
   * with execute, or paths of modules that export them (an agent module's path finds the tools with
   * execute it exports). Loaded once, here.
   */
  tools?: Array<ToolSource | string> | ToolRegistry;
  /** Anthropic API key / base URL for this worker; default ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL. */
  model?: ModelConnection & { defaultModel?: string };
  /**
   * Model connections by name, besides the built-in ones (docs/models.md): a run names one
   * (`connection: 'openai'`), never its credentials, which stay on this worker.
   */
  connections?: Record<string, ModelConnectionSettings>;
  /**
   * The live path on a broker: each live event also goes to Redis Streams at once, for readers with
   * `stream({ broker })` in any process (docs/streaming.md). Needs the `redis` package.
   */
  liveBroker?: LiveBrokerSettings;
  /** Where transcripts and large payloads live; default a private local directory (FH_STORE_DIR, else ~/.local/share/fabric-harness/store). */
  store?: TranscriptStore;
  /** Offload payloads above this many bytes to the store (Temporal external storage). */
  offloadThresholdBytes?: number;
  /** Agent events, in the worker process (never re-emitted on replay). */
  onEvent?: EventListener;
  /** How bash runs: extra env, passed-through env, wrapper (the platform's by default: 'bwrap' on Linux, 'seatbelt' on macOS; 'none'), network. */
  toolSandbox?: ToolSandboxOptions;
  /**
   * MCP servers this worker registers, by name: agents name them in `init({ mcp: ['github'] })`. Their
   * config (tokens in `env` or `headers`) stays on the worker and never enters history.
   */
  mcpServers?: Record<string, McpServerConfig | McpServerConfigWithoutName>;
  /**
   * The agent modules this worker runs (paths). Tool calls of a run go to a task queue of its agent set,
   * which the worker polls next to its own (docs/deploying.md). Found without this when the worker is
   * given `workflowsPath: await workflowsPathFor(...)`; needed with a `workflowBundle`, or to run tool
   * calls on a worker without workflows.
   */
  agents?: string | string[];
  /** In-memory cache sizes of the harness on this worker (transcripts, token counts); see WorkerCacheSizes. */
  caches?: WorkerCacheSizes;
  /**
   * A run whose workflow task needs an offloaded payload the store proved absent is terminated with
   * STORE_BLOB_MISSING (src/worker/missing-blob-reaper.ts; docs/deploying.md, "When a blob is missing").
   * `false` leaves such runs RUNNING, their task retried until the blob is put back. Default on.
   */
  missingBlobReaper?: false | Pick<MissingBlobReaperOptions, 'delayMs' | 'minAttempts' | 'maxChecks'>;
  /**
   * Worker memory that idle cached sessions may hold: bytes (an integer above 1), or a share of the
   * worker's memory limit (a number in (0, 1]: of the container's limit, cgroup `memory.max`, when there
   * is one, else of `os.totalmem()`). Default 0.2. The worker's `maxCachedWorkflows` becomes this budget
   * divided by the measured bytes one cached session holds (BYTES_PER_CACHED_SESSION, session-cache.ts),
   * at least 10 and at most Temporal's own heap-based default; an explicit `maxCachedWorkflows` wins.
   * A session past the cache is evicted: its next turn replays its history (docs/deploying.md, "Sizing a worker").
   */
  sessionCacheMemory?: number;
}

/**
 * The harness as a Temporal plugin: add it to your own `Worker.create({ plugins })` and
 * `Client({ plugins })`. It registers the activities, the event sinks, the bundler settings agent
 * modules need, and external storage on the data converter (client and worker must agree on it).
 */
export class FabricHarnessPlugin extends SimplePlugin {
  readonly store: TranscriptStore;
  private readonly harness: FabricHarnessPluginOptions;
  /** The tool queue each worker configured here polls, by its task queue. */
  private readonly toolQueues = new Map<string, ToolQueuePlan>();
  /** The options each worker configured here runs with, by its task queue (for its pinned MCP queue). */
  private readonly configured = new Map<string, WorkerOptions>();
  private readonly pins: McpPinQueues;
  /** The reapers of the workers running with this plugin: the store driver reports absent blobs to them. */
  private readonly reapers: Set<MissingBlobReaper>;

  constructor(options: FabricHarnessPluginOptions = {}) {
    // A bad budget fails here, before any worker is configured (configureWorker applies it).
    if (options.sessionCacheMemory !== undefined) chooseSessionCache({ sessionCacheMemory: options.sessionCacheMemory });
    const store = options.store ?? new FileTranscriptStore();
    const reapers = new Set<MissingBlobReaper>();
    const externalStorage = externalStorageFor(store, options.offloadThresholdBytes, (missing) => reapers.forEach((r) => r.report(missing)));
    const mcp = new McpConnections({ servers: parseMcpServers(options.mcpServers), sandbox: resolveToolSandbox(options.toolSandbox) });
    const pins = new McpPinQueues();
    const liveBroker = options.liveBroker ? new RedisLivePublisher(options.liveBroker) : undefined;
    super({
      name: 'fabric-harness',
      activities: Object.assign(createFlowActivities(store), createActivities({
        connection: options.model ?? {},
        ...(options.connections ? { connections: options.connections } : {}),
        defaultModel: options.model?.defaultModel,
        store,
        tools: options.tools instanceof ToolRegistry ? options.tools : ToolRegistry.from(loadSources(options.tools ?? [], 'tools')),
        toolSandbox: options.toolSandbox,
        mcp,
        mcpPinQueue: (servedQueue) => pins.queueFor(servedQueue),
        caches: options.caches,
        ...(liveBroker ? { liveBroker } : {}),
      })),
      // The worker's MCP connections (stdio servers are child processes) and its broker connection end with it.
      runContext: async (next) => {
        liveBroker?.open();
        try {
          await next();
        } finally {
          await mcp.closeAll();
          await liveBroker?.close();
        }
      },
      dataConverter: (existing?: DataConverter) => ({ ...existing, externalStorage }),
    });
    this.store = store;
    this.keepSources = options.showStackTraceSources === true;
    this.harness = options;
    this.pins = pins;
    this.reapers = reapers;
  }

  /** A worker configured with `showStackTraceSources`: the bundle keeps Temporal's full source map (see configureAgentBundler). */
  private keepSources: boolean;

  configureWorker(options: WorkerOptions): WorkerOptions {
    // Heartbeat details carry a model call's live deltas to clients: send them within 200 ms, not the
    // SDK's default (80% of the heartbeat timeout, 8 s here). A setting of the user's wins.
    // Cached sessions hold worker memory off the heap, which Temporal's heap-based default ignores:
    // bound them by a memory budget instead (one log line says what was chosen and why).
    const cache = chooseSessionCache({ maxCachedWorkflows: options.maxCachedWorkflows, sessionCacheMemory: this.harness.sessionCacheMemory });
    Runtime.instance().logger.info(`fabric-harness: ${cache.reason}`, { taskQueue: options.taskQueue });
    const throttled = {
      ...options,
      maxCachedWorkflows: cache.maxCachedWorkflows,
      maxHeartbeatThrottleInterval: options.maxHeartbeatThrottleInterval ?? STREAM_HEARTBEAT_THROTTLE,
    };
    // Temporal bundles after configuring the worker: the bundle keeps the sources' text when shown.
    if (options.showStackTraceSources) this.keepSources = true;
    const configured = withSinks(super.configureWorker(throttled), this.harness.onEvent);
    const plan = toolQueueOf(configured, this.harness.agents);
    if (plan) this.toolQueues.set(configured.taskQueue, plan);
    this.configured.set(configured.taskQueue, configured);
    return configured;
  }

  /** Runs the worker and, next to it, the activity worker of its agent set's tool queue. */
  async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    const plan = this.toolQueues.get(worker.options.taskQueue);
    const stopWorker = () => worker.getState() === 'RUNNING' && worker.shutdown();
    // The activity interceptors as the worker has them after every plugin (OpenTelemetry's come after
    // ours), so a tool call on the tool queue is traced and intercepted like one on the worker's own queue.
    const activity = worker.options.interceptors?.activity;
    const withInterceptors = (o: WorkerOptions): WorkerOptions => (activity?.length ? { ...o, interceptors: { ...o.interceptors, activity } } : o);
    const base = this.configured.get(worker.options.taskQueue);
    const served = [worker.options.taskQueue, ...(plan ? [plan.taskQueue] : [])];
    if (base) this.pins.serve(served, withInterceptors(base), stopWorker);
    const reaper = this.reaperFor(worker);
    // The worker becomes RUNNING when `next` runs, and only a RUNNING worker is stopped by Temporal's
    // runUntil (and by a shutdown signal): so nothing is awaited before it. The tool queue's worker used
    // to be created first, and a runUntil whose promise settled meanwhile (an input rejected at once)
    // waited forever on a worker nobody stopped.
    const running = super.runWorker(worker, next);
    running.catch(() => undefined); // awaited below, after the tool worker starts; not unhandled meanwhile
    let tools: RunningToolWorker | undefined;
    let toolsFailed: { error: unknown } | undefined;
    try {
      if (plan) {
        try {
          tools = await startToolWorker({ ...plan, options: withInterceptors(plan.options) }, stopWorker);
        } catch (error) {
          toolsFailed = { error };
          stopWorker();
        }
      }
      await running;
    } finally {
      reaper?.stop();
      if (reaper) this.reapers.delete(reaper);
      await tools?.stop();
      await this.pins.stop(served);
    }
    if (toolsFailed) throw toolsFailed.error;
    tools?.rethrow();
  }

  /** The worker's missing-blob reaper, on its own connection and namespace (none when turned off). */
  private reaperFor(worker: Worker): MissingBlobReaper | undefined {
    const settings = this.harness.missingBlobReaper;
    if (settings === false || !worker.connection) return undefined;
    const reaper = new MissingBlobReaper({
      ...settings,
      workflowService: worker.connection.workflowService,
      namespace: worker.options.namespace,
      store: this.store,
      identity: `${worker.options.identity} (missing-blob reaper)`,
      log: (message, attrs) => Runtime.instance().logger.warn(message, attrs),
    });
    this.reapers.add(reaper);
    return reaper;
  }

  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return withSinks(super.configureReplayWorker(options), undefined);
  }

  configureBundler(options: BundleOptions): BundleOptions {
    return configureAgentBundler(super.configureBundler(options), { keepSources: this.keepSources });
  }
}

/** How soon a model call's newest deltas reach Temporal (and clients), at most. */
export const STREAM_HEARTBEAT_THROTTLE = '200ms';
/** A registered server's name is its key. */
type McpServerConfigWithoutName = Omit<McpStdioServer, 'name'> | Omit<McpHttpServer, 'name'>;

/** Registered servers, checked at startup: a bad one fails the worker with a message naming it. */
function parseMcpServers(servers: FabricHarnessPluginOptions['mcpServers']): Record<string, McpServerConfig> {
  const out: Record<string, McpServerConfig> = {};
  for (const [name, config] of Object.entries(servers ?? {})) {
    out[name] = parseWith(mcpServerConfigSchema, { ...config, name }, `mcpServers.${name}`) as McpServerConfig;
  }
  return out;
}

const warnedKeys = new Set<string>();

function withSinks<T extends { sinks?: InjectedSinks<any> }>(options: T, onEvent: EventListener | undefined): T {
  const sinks: InjectedSinks<FabricSinks> = {
    fabric: {
      event: { fn: (_info, event) => onEvent?.(event), callDuringReplay: false },
      warnOnce: {
        fn: (_info, key, message) => {
          if (warnedKeys.has(key)) return;
          warnedKeys.add(key);
          console.warn(message);
        },
        callDuringReplay: false,
      },
    },
  };
  return { ...options, sinks: { ...options.sinks, ...sinks } };
}
