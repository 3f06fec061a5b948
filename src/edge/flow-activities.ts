/**
 * Flow activities, on the worker. A stage's updates pass through fhFlowCommit: its input is the
 * update's record in history, and a value over the threshold is stored where tool outputs are (so an
 * agent reads it back with read_artifact) and answered as a pointer.
 */
import { artifactPointer, oversizedKeys, serializedBytes } from '../core/flows/context';
import { encodeFailure } from '../wire/failures';
import type { FlowActivities } from '../wire/flow-activity-contract';
import type { TranscriptStore } from './transcript-store';
import { ToolResultStore } from './transcripts';

export function createFlowActivities(store: TranscriptStore): FlowActivities {
  const values = new ToolResultStore(store);
  return {
    async fhFlowCommit(input) {
      const offloaded: Record<string, string> = {};
      try {
        for (const key of oversizedKeys(input.updates, input.offloadBytes)) {
          const v = input.updates[key]!;
          // Text is stored as itself (read back readable); anything else as its JSON.
          const text = typeof v === 'string' ? v : JSON.stringify(v);
          const ref = await values.save(text);
          if (ref !== undefined) offloaded[key] = artifactPointer(ref, serializedBytes(v));
        }
      } catch (err) {
        throw encodeFailure(err);
      }
      return { offloaded };
    },
  };
}
