/**
 * The worker's side of the live broker when Redis does not answer: the worker says so once, when it starts
 * (open(), from the plugin's runContext), not first at a model call's first live event; and the calls that
 * follow go on without it (the heartbeat details carry their events) and without another warning.
 */
import { RedisLivePublisher } from '../../src/activities/stream/redis-broker';
import { getFreePort } from '../../src/testing/loopback-ports';

describe('RedisLivePublisher with no Redis there', () => {
  it('warns once when opened, before any event, and its events then go nowhere without a second warning', async () => {
    const url = `redis://127.0.0.1:${await getFreePort()}`; // nothing listens on it
    const warnings: string[] = [];
    const warn = jest.spyOn(console, 'warn').mockImplementation((m: string) => void warnings.push(m));
    const publisher = new RedisLivePublisher({ url });
    try {
      publisher.open();
      const started = Date.now();
      while (!warnings.length && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 50));
      expect(warnings).toEqual([expect.stringContaining(`[fabric-harness] live broker ${url}: `)]);
      expect(warnings[0]).toContain('readers fall back to the heartbeat details');
      publisher.add('wf-1', { callId: 'c1', attempt: 1, end: true });
      await new Promise((r) => setTimeout(r, 2_500)); // its own connect gives up after 2 s
      expect(warnings).toHaveLength(1);
    } finally {
      warn.mockRestore();
      await publisher.close();
    }
  }, 20_000);
});
