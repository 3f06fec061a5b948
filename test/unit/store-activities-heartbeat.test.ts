/**
 * The store activities a workflow calls with a heartbeat timeout heartbeat while the store works, so a
 * slow disk or bucket on a live worker is not mistaken for a dead worker (the heartbeat timeout is 10 s;
 * a store call that takes longer, and never heartbeats, would be timed out and retried forever).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../src/activities/create-activities';
import { MemoryTranscriptStore, type TranscriptStore } from '../../src/activities/stores/transcript-store';
import type { FabricActivities } from '../../src/wire/activity-contract';

/** A store whose reads and writes each take `ms`. */
function slowStore(ms: number): TranscriptStore {
  const inner = new MemoryTranscriptStore();
  const later = <T>(call: () => Promise<T>) => new Promise<T>((resolve, reject) => setTimeout(() => call().then(resolve, reject), ms));
  return { get: (key) => later(() => inner.get(key)), put: (key, data) => later(() => inner.put(key, data)) };
}

/** Runs one activity in a mock activity context; resolves to how many heartbeats it sent. */
async function heartbeatsOf(run: (acts: FabricActivities) => Promise<unknown>): Promise<number> {
  const acts = createActivities({ connection: { apiKey: 'k', baseURL: 'http://127.0.0.1:9' }, store: slowStore(2_600), tools: [] });
  const env = new MockActivityEnvironment();
  let beats = 0;
  env.on('heartbeat', () => beats++);
  await env.run(() => run(acts));
  return beats;
}

describe('store activities heartbeat while the store is slow', () => {
  it('storing a transcript, archiving replies, storing a prelude, loading memory', async () => {
    const beats = await Promise.all([
      heartbeatsOf((a) => a.fhStoreTranscript({ base: null, delta: [{ type: 'user', text: 'hi' }] })),
      heartbeatsOf((a) => a.fhArchiveReplies({ prev: null, replies: [['m1', { text: 'hello' }]] })),
      heartbeatsOf((a) => a.fhStorePrelude({ system: 'be brief', tools: [] })),
      heartbeatsOf((a) => a.fhLoadMemory({ key: 'notes' })),
    ]);
    expect(beats.map((n) => n >= 1)).toEqual([true, true, true, true]);
  }, 30_000);
});
