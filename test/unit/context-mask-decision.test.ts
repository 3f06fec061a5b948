/**
 * Observation masking as a recorded decision: the controller's facts carry a mask boundary only when
 * masking is configured and a large enough chunk went stale; the decision records it; the session
 * masks per the recorded decision (not its own settings), before any summary, keeping test output.
 */
import { decideFromFacts, decisionFacts, type CompactionDecision, type DecisionFacts } from '../../src/core/context/compaction/decide';
import { planMask, MASK_MIN_RESULTS } from '../../src/core/context/mask-plan';
import { isPlaceholder } from '../../src/core/context/mask';
import { resolveCompactionSettings, type CompactionSettings } from '../../src/core/context/settings';
import { Session } from '../../src/core/conversation';
import type { ModelCallResult, RuntimePorts } from '../../src/core/ports';
import type { AssistantEntry, Entry } from '../../src/core/entries';
import { builtinTools } from '../../src/core/builtin-tools';
import type { AgentEvent } from '../../src/core/events';
import { toApiMessages } from '../../src/core/entries';
import { validateMessagesRequest } from '../../src/testing';

const fileText = (i: number) => Array.from({ length: 60 }, (_, l) => `file ${i} line ${l}: some source code here`).join('\n');
const TEST_OUTPUT = 'PASS test/a.test.ts\nTests:       12 passed, 12 total\nTime: 1.2s';

/** A history of `reads` read_file exchanges, with an `npm test` run first. */
function history(reads: number): Entry[] {
  const h: Entry[] = [
    { type: 'user', text: 'fix the bug' },
    { type: 'assistant', content: [{ type: 'tool_use', id: 'test', name: 'bash', input: { command: 'npm test' } }] } as AssistantEntry,
    { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 'test', content: TEST_OUTPUT }] },
  ];
  for (let i = 0; i < reads; i++) {
    h.push({ type: 'assistant', content: [{ type: 'tool_use', id: `r${i}`, name: 'read_file', input: { path: `src/f${i}.ts` } }] } as AssistantEntry);
    h.push({ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: `r${i}`, content: fileText(i) }] });
  }
  h.push({ type: 'assistant', content: [{ type: 'text', text: 'read them all' }] } as AssistantEntry);
  return h;
}

const resultsOf = (entries: readonly Entry[]) =>
  entries.flatMap((e) => (e.type === 'tool_results' ? e.results : []));

function facts(entries: Entry[], compaction: CompactionSettings): DecisionFacts {
  const settings = resolveCompactionSettings(compaction, undefined, 100_000, { enabled: true });
  const mask = planMask(entries, compaction.toolResults);
  const f = decisionFacts({ entries, settings });
  return mask ? { ...f, maskBefore: mask.before } : f;
}

describe('planning a mask', () => {
  it('is off unless maskAfterEntries or maskAfterTokens is set', () => {
    expect(planMask(history(12), undefined)).toBeUndefined();
    expect(planMask(history(12), { maxTokens: 500, preserve: { tools: ['x'] } })).toBeUndefined();
  });

  it('waits for a chunk of stale results, so the prompt cache is not rebuilt on every call', () => {
    // 4 stale reads (small files): under MASK_MIN_RESULTS and under the token chunk.
    const small = (n: number) => history(n).map((e) => (e.type === 'tool_results' && e.results[0]!.tool_use_id !== 'test' ? { ...e, results: [{ ...e.results[0]!, content: 'a\nb\nc '.repeat(20) }] } : e));
    expect(planMask(small(MASK_MIN_RESULTS - 1 + 2), { maskAfterEntries: 5 })).toBeUndefined();
    const plan = planMask(small(MASK_MIN_RESULTS + 2), { maskAfterEntries: 5 });
    expect(plan).toMatchObject({ masked: MASK_MIN_RESULTS });
  });

  it('masks once enough tokens would be saved, and never counts test output', () => {
    const h = history(12);
    const plan = planMask(h, { maskAfterEntries: 4 })!;
    expect(plan.before).toBe(h.length - 5); // keep 4 would start at r10's results: the window takes its call too
    expect(plan.masked).toBe(10); // reads r0..r9; the npm test result is evidence
    expect(plan.savedTokens).toBeGreaterThan(2000);
  });

  it('the preserve settings keep more results verbatim', () => {
    const plan = planMask(history(12), { maskAfterEntries: 4, preserve: { commands: ['^src/f[0-4]\\.ts$'] } })!;
    expect(plan.masked).toBe(5);
  });
});

describe('the recorded decision', () => {
  it('carries the mask boundary when the facts have one (threshold only), and none otherwise', () => {
    const h = history(12);
    const withMask = decideFromFacts(facts(h, { toolResults: { maskAfterEntries: 4 } }));
    expect(withMask.mask).toEqual({ before: h.length - 5 });
    expect(withMask.compact).toBe(false);
    expect(decideFromFacts(facts(h, {})).mask).toBeUndefined();
    expect('mask' in decideFromFacts(facts(h, {}))).toBe(false); // old decisions' shape is unchanged
    expect(decideFromFacts({ ...facts(h, { toolResults: { maskAfterEntries: 4 } }), trigger: 'overflow' }).mask).toBeUndefined();
  });
});

/** Ports whose decisions are "recorded": decideThenCallModel answers with the scripted decision, whatever the facts say. */
function recordedPorts(recorded: (facts: DecisionFacts) => CompactionDecision, events: AgentEvent[]) {
  const sent: Entry[][] = [];
  const summarized: string[] = [];
  const reply = async (entries: readonly Entry[]): Promise<ModelCallResult> => {
    sent.push([...entries]);
    return { entry: { type: 'assistant', content: [{ type: 'text', text: 'ok' }] } as AssistantEntry, usage: { inputTokens: 10, outputTokens: 5 }, stopReason: 'end_turn', model: 'm' };
  };
  const ports: RuntimePorts = {
    runtime: 'inline',
    callModel: (req) => reply(req.entries),
    async decideThenCallModel(req, f) {
      const decision = recorded(f);
      return decision.compact || decision.mask ? { decision } : { decision, result: await reply(req.entries) };
    },
    summarize: async (req) => {
      summarized.push(req.userText);
      return { text: '## Goal\nsummary', usage: { inputTokens: 1, outputTokens: 1 } };
    },
    runTool: async () => ({ content: 'x', isError: false }),
    decideCompaction: async (f) => decideFromFacts(f),
    resolveModel: async (model) => ({ model: model ?? 'm' }),
    now: () => 0,
    emit: (e) => events.push(e),
  };
  return { ports, sent, summarized };
}

function session(ports: RuntimePorts, compaction: CompactionSettings): Session {
  const s = new Session(ports, {
    id: 'main', model: 'm', maxTokens: 100, tools: [builtinTools.read_file, builtinTools.bash], cwd: '.', maxSteps: 5,
    compaction, compactionDefaultEnabled: true, contextWindowTokens: 100_000,
  });
  return s;
}

describe('the session masks per the recorded decision', () => {
  it('live: masks stale reads before the call, keeps test output and recent reads, emits a masking event', async () => {
    const events: AgentEvent[] = [];
    const { ports, sent } = recordedPorts((f) => decideFromFacts(f), events);
    const s = session(ports, { toolResults: { maskAfterEntries: 4 } });
    s.restore({ entries: history(12) });
    expect(await s.prompt('go on')).toBe('ok');
    const results = resultsOf(sent[0]!);
    expect(results[0]!.content).toBe(TEST_OUTPUT);
    // 'go on' made 29 entries; the newest 4 start at r11's call (index 25): reads r0..r10 are stale.
    expect(results.slice(1, 12).every((r) => isPlaceholder(r.content))).toBe(true);
    expect(results[1]!.content).toBe('[tool: read_file("src/f0.ts") → 60 lines, ' + fileText(0).length + ' chars]');
    expect(results.slice(12).map((r) => r.content)).toEqual([fileText(11)]);
    const masking = events.find((e) => e.type === 'masking');
    expect(masking?.data).toMatchObject({ before: 25, masked: 11 });
    expect((masking!.data as { tokensAfter: number }).tokensAfter).toBeLessThan((masking!.data as { tokensBefore: number }).tokensBefore);
    expect(s.compactionState().lastDecision?.mask).toEqual({ before: 25, ids: Array.from({ length: 11 }, (_, i) => `r${i}`) });
    expect(validateMessagesRequest({ model: 'm', max_tokens: 1, messages: toApiMessages([...s.messages()]) })).toBeUndefined();
  });

  it('replay without masking in the record (an old history): nothing is masked though the settings now ask for it', async () => {
    const events: AgentEvent[] = [];
    const { ports, sent } = recordedPorts((f) => {
      const { maskBefore: _ignored, ...old } = f;
      return decideFromFacts(old);
    }, events);
    const s = session(ports, { toolResults: { maskAfterEntries: 2 } });
    s.restore({ entries: history(12) });
    await s.prompt('go on');
    expect(resultsOf(sent[0]!).some((r) => isPlaceholder(r.content))).toBe(false);
    expect(resultsOf(s.messages()).some((r) => isPlaceholder(r.content))).toBe(false);
    expect(events.filter((e) => e.type === 'masking')).toHaveLength(0);
  });

  it('replay under changed settings follows the recorded boundary, not the settings', async () => {
    const events: AgentEvent[] = [];
    // Recorded when maskAfterEntries was 10 (boundary 18: reads r0..r6); the settings now say nothing about masking.
    const { ports, sent } = recordedPorts((f) => ({ ...decideFromFacts(f), mask: { before: 18 } }), events);
    const s = session(ports, {});
    s.restore({ entries: history(12) });
    await s.prompt('go on');
    const masked = resultsOf(sent[0]!).map((r) => isPlaceholder(r.content));
    expect(masked).toEqual([false, true, true, true, true, true, true, true, false, false, false, false, false]);
    expect(events.filter((e) => e.type === 'masking')).toHaveLength(1);
  });

  it('masks before the summary: the summariser reads placeholders, not the stale output', async () => {
    const { ports, summarized } = recordedPorts((f) => ({ ...decideFromFacts(f), mask: { before: 18 }, compact: true, reason: 'threshold', cut: 20, keptEntries: f.entryCount - 20 }), []);
    const s = session(ports, { toolResults: { maskAfterEntries: 10 } });
    s.restore({ entries: history(12) });
    await s.prompt('go on');
    expect(summarized.join('\n')).toContain('[tool: read_file("src/f0.ts") → 60 lines');
    expect(summarized.join('\n')).not.toContain('file 0 line 59');
  });
});
