/**
 * Which model connection a session's calls go to. A connection is a provider and its credentials,
 * configured on the worker (or the inline process) by name; a run names it (`init({ connection })`, a
 * session's settings, a flow stage's `model="openai:gpt-5.1"`) and never sees its credentials.
 *
 * The route is carried on the ports a session runs on (routedPorts): every model call, summary, memory
 * flush and model lookup names the connection. The default connection ('anthropic') is never named, so
 * the Anthropic path's requests (and on Temporal its activity inputs) are what they were before
 * connections existed: histories recorded by earlier releases replay unchanged.
 */
import type { RuntimePorts } from './ports';
import { namedConnection } from './connection-name';

export { DEFAULT_CONNECTION, connectionNameSchema, namedConnection } from './connection-name';

/** A session's connection (changeable until its first message) and where its summaries go. */
export class ConnectionRoute {
  constructor(
    /** The session's connection (undefined: the default). */
    public connection: string | undefined,
    /** Summaries and memory flushes: this connection and model instead of the session's (compaction.summaryConnection). */
    readonly summary?: { connection: string; model?: string },
  ) {}

  /** The connection a request names (absent for the default). */
  get named(): string | undefined {
    return namedConnection(this.connection);
  }

  /** Summaries and memory flushes: the summary connection, else the session's; `model` the session's unless summaryModel. */
  forSummary(model: string): { connection?: string; model: string } {
    if (!this.summary) return withConnection({ model }, this.named);
    return withConnection({ model: this.summary.model ?? model }, namedConnection(this.summary.connection));
  }
}

/** `req` with `connection` set only when it names one (absent stays absent, in JSON and in history). */
export function withConnection<T extends object>(req: T, connection: string | undefined): T & { connection?: string } {
  return connection === undefined ? req : { ...req, connection };
}

/**
 * The ports a session runs on, naming its route's connection on every model-using call. Read at each
 * call, so a connection changed before the first message applies to it.
 */
export function routedPorts(ports: RuntimePorts, route: ConnectionRoute): RuntimePorts {
  const memory = ports.memory;
  return {
    ...ports,
    callModel: (req) => ports.callModel(withConnection(req, route.named)),
    decideThenCallModel: (req, facts) => ports.decideThenCallModel(withConnection(req, route.named), facts),
    summarize: (req) => ports.summarize({ ...req, ...route.forSummary(req.model) }),
    resolveModel: (model, options = {}) => ports.resolveModel(model, withConnection(options, route.named)),
    // A sub-agent inherits the session's connection (unless its own init names one).
    runTool: (call, def) => ports.runTool(def.subAgent ? withConnection(call, route.named) : call, def),
    ...(memory
      ? {
          memory: {
            get agentName() {
              return memory.agentName;
            },
            load: (key) => memory.load(key),
            flush: (req) => memory.flush({ ...req, ...route.forSummary(req.model) }),
          },
        }
      : {}),
  };
}
