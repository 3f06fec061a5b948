/**
 * The worker's side of the live path on Redis Streams: each live event a model or tool activity
 * publishes is also added (`XADD`) at once, not on the heartbeat's 200 ms throttle, so a reader
 * blocked on `XREAD` sees a delta within milliseconds of the model. Best effort: the heartbeat
 * details still carry every event, so a broker that is down costs readers only speed (it is logged
 * once, and the activity goes on).
 *
 * `redis` is an optional peer, loaded when a worker names a broker; this module's types name none of it.
 */
import { encodeLiveEntry, liveBrokerKey, type LiveBrokerEntry, type LiveBrokerSettings } from '../../wire/live-broker';
import { loadRedis, redisModule, type RedisConnection } from './redis-client';

export class RedisLivePublisher {
  private client: Promise<RedisConnection | undefined> | undefined;
  private warned = false;

  constructor(private readonly settings: LiveBrokerSettings) {
    redisModule(); // no `redis` package: PROVIDER_PACKAGE_MISSING when the worker is made, not a warning at its first call
  }

  /**
   * Connects now, when the worker starts, rather than at its first live event: that event does not wait on
   * the connect, and a broker that does not answer is in the log before any call streams (once, as ever).
   */
  open(): void {
    void (this.client ??= this.connect());
  }

  /** Adds `entry` to the workflow's stream; never throws (the heartbeat details are the fallback). */
  add(workflowId: string, entry: LiveBrokerEntry): void {
    void this.send(workflowId, entry);
  }

  private async send(workflowId: string, entry: LiveBrokerEntry): Promise<void> {
    try {
      const client = await (this.client ??= this.connect());
      if (!client) return;
      const maxLen = this.settings.maxLen ?? 10_000;
      const minId = Date.now() - (this.settings.maxAgeMs ?? 600_000);
      const key = liveBrokerKey(workflowId);
      // Trimmed by length here and by age with MINID: one command, no separate sweep.
      await client.sendCommand(['XADD', key, 'MAXLEN', '~', String(maxLen), '*', ...encodeLiveEntry(entry)]);
      if ('end' in entry) await client.sendCommand(['XTRIM', key, 'MINID', '~', `${minId}-0`]);
    } catch (err) {
      this.warn(err);
    }
  }

  private async connect(): Promise<RedisConnection | undefined> {
    try {
      return await loadRedis(this.settings.url);
    } catch (err) {
      this.warn(err);
      this.client = undefined; // the next event tries again
      return undefined;
    }
  }

  private warn(err: unknown): void {
    if (this.warned) return;
    this.warned = true;
    console.warn(`[fabric-harness] live broker ${this.settings.url}: ${err instanceof Error ? err.message : String(err)}; readers fall back to the heartbeat details`);
  }

  /** Closes the connection if one is open; a connect still under way is closed when it lands (never waited on). */
  async close(): Promise<void> {
    const pending = this.client;
    this.client = undefined;
    void pending?.then((c) => c?.close()).catch(() => undefined);
  }
}
