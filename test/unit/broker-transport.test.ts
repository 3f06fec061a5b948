/**
 * The broker's reader transport against a broker that fails: the reader falls back to polling and lets go
 * of its blocking-read connection (a dropped but unclosed connection reconnects forever in the background
 * and keeps the process alive: CI's jest never exited after the broker tests).
 */
import { BrokerStreamTransport, LiveBrokerClient } from '../../src/client/stream/broker-transport';
import type { RedisConnection } from '../../src/activities/stream/redis-client';
import { openCallUpstream as upstream } from '../support/open-call-upstream';

/** The shared connection answers (nothing there yet); its duplicate's blocking read fails (the broker went away). */
function connection(closed: string[], name: string, answers: boolean): RedisConnection {
  return {
    sendCommand: () => (answers ? Promise.resolve([]) : Promise.reject(new Error('connection lost'))),
    duplicate: () => Promise.resolve(connection(closed, `${name}'s duplicate`, false)),
    close: async () => void closed.push(name),
  };
}

describe('BrokerStreamTransport with a broker that fails', () => {
  it('closes its blocking-read connection when a read fails, and polls from then on', async () => {
    const closed: string[] = [];
    const broker = new LiveBrokerClient({ url: 'redis://127.0.0.1:1' });
    broker.connection = () => Promise.resolve(connection(closed, 'shared', true));
    const transport = new BrokerStreamTransport(upstream, broker, 'wf-1', 5);
    await transport.snapshot(0);
    await transport.waitForLive('run-1');
    await new Promise((r) => setImmediate(r));
    expect(closed).toEqual(["shared's duplicate"]);
    // Down: the next wait is the poll interval, with no new connection made.
    const started = Date.now();
    await transport.waitForLive('run-1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(4);
    expect(closed).toEqual(["shared's duplicate"]);
  });
});

describe('a broker named without the redis package', () => {
  it('is PROVIDER_PACKAGE_MISSING when the reader client or the worker plugin is made, not a silent fallback at the first read or call', () => {
    jest.isolateModules(() => {
      jest.doMock('redis', () => {
        throw Object.assign(new Error("Cannot find module 'redis'"), { code: 'MODULE_NOT_FOUND' });
      });
      const { liveBroker } = require('../../src/client/stream/broker-transport') as typeof import('../../src/client/stream/broker-transport');
      const { FabricHarnessPlugin } = require('../../src/worker/plugin') as typeof import('../../src/worker/plugin');
      const missing = { code: 'PROVIDER_PACKAGE_MISSING', packageName: 'redis', message: expect.stringContaining('npm install redis') };
      expect(() => liveBroker({ url: 'redis://127.0.0.1:6379' })).toThrow(expect.objectContaining(missing));
      expect(() => new FabricHarnessPlugin({ liveBroker: { url: 'redis://127.0.0.1:6379' } })).toThrow(expect.objectContaining(missing));
      expect(() => new FabricHarnessPlugin({})).not.toThrow(); // no broker named: the package is never asked for
    });
  });
});
