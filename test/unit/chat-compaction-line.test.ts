/** `fh chat`'s compaction line says what the compaction gate checked and restated ("12 facts, 2 restated"). */
import { compactionLine } from '../../src/cli/chat/extras';

it('shows the gate result when the gate ran, and the plain line for a run without it', () => {
  const gate = { checked: 12, found: 10, restated: 2, mode: 'restate', reasked: false, byKind: {} };
  expect(compactionLine({ reason: 'threshold', messagesBefore: 40, messagesAfter: 21, gate })).toBe('(compacted: 40 → 21 messages; 12 facts, 2 restated)');
  expect(compactionLine({ messagesBefore: 40, messagesAfter: 21, gate: { ...gate, reasked: true } })).toBe('(compacted: 40 → 21 messages; 12 facts, 2 restated (re-asked once))');
  expect(compactionLine({ messagesBefore: 6, messagesAfter: 3 })).toBe('(compacted: 6 → 3 messages)');
});
