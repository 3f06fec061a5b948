/**
 * The compaction gate's result where people read it, from the recorded gated-compaction history (no
 * server): the audit transcript's "Compaction gate" records, `fh state` from history ('last gate'), and
 * `fh state` from the live query ('gate').
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { auditTranscript } from '../../src/audit/collect';
import { stateFromHistory } from '../../src/audit/history-state';
import type { CompactionGateRecord } from '../../src/audit/records';
import { formatCompactionState, formatHistoryState } from '../../src/cli/render';
import type { CompactionState } from '../../src/core/context/compaction/runner';

const load = async () => historyFromJSON(JSON.parse(await fs.readFile(path.resolve(__dirname, '../histories/0.6.7/gated-compaction.json'), 'utf8')));

it('the audit transcript has a gate record per check, with counts by kind and the facts restated', async () => {
  const { json, markdown } = await auditTranscript(await load());
  const gates = json.records.filter((r): r is CompactionGateRecord => r.type === 'compaction_gate');
  expect(gates.length).toBeGreaterThanOrEqual(1);
  for (const g of gates) {
    expect(g).toMatchObject({ recorded: true, mode: 'restate', reasked: false });
    expect(g.found! + g.restated!).toBe(g.checked);
    expect(Object.values(g.byKind!).reduce((n, c) => n + c.checked, 0)).toBe(g.checked);
  }
  expect(markdown.match(/^## \d+\. Compaction gate: \d+ facts, \d+ restated/gm)).toHaveLength(gates.length);
  expect(markdown).toMatch(/- Found in the summary, by kind: rule 0\/1/);
});

it('fh state from history shows the last gate check', async () => {
  const state = await stateFromHistory(await load());
  expect(state.compaction.lastGate).toMatchObject({ mode: 'restate', eventId: expect.any(Number) });
  expect(formatHistoryState('recorded-gated-compaction', state)).toMatch(/last gate\s+\d+ facts, \d+ restated \(event \d+\)/);
});

it('fh state from the live query shows the last compaction’s gate, by kind', () => {
  const state = {
    sessionId: 'main', enabled: true, settings: undefined, count: 1, decisions: 1, lastDecision: undefined, estimate: { tokens: 10, method: 'heuristic' },
    contextWindowTokens: 1000, usagePercent: 1, strategy: { strategy: 'client', why: 'settings' },
    last: {
      reason: 'threshold', at: 0, cut: 4, messagesBefore: 10, messagesAfter: 5, tokensBefore: 900, tokensAfter: 300, summary: 's', fallback: false, ineffective: false,
      gate: { checked: 12, found: 10, restated: 2, mode: 'restate', reasked: false, byKind: { rule: { checked: 2, found: 1, restated: 1 }, file: { checked: 10, found: 9, restated: 1 } } },
    },
  } as CompactionState;
  expect(formatCompactionState('w', state)).toMatch(/gate\s+12 facts, 2 restated; found by kind: rule 1\/2, file 9\/10/);
});
