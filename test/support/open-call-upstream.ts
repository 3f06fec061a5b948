/**
 * The durable side of a run with one open model call and nothing streamed yet: what a broker reader
 * (BrokerStreamTransport) reads before it waits on the broker for the call's live events.
 */
import type { StreamSnapshot, StreamTransport } from '../../src/client/stream/transport';

export const openCallUpstream: StreamTransport = {
  snapshot: async (): Promise<StreamSnapshot> => ({
    runId: 'run-1',
    running: true,
    continued: false,
    page: { events: [], blocks: [{ callId: 'call-1', kind: 'model', from: 0, to: 0, closed: false }], next: 0, oldest: 0 },
    live: new Map(),
  }),
  readRun: async () => ({ events: [], blocks: [], next: 0, oldest: 0 }),
  previousRun: async () => undefined,
  waitForChange: async () => undefined,
};
