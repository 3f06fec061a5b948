/**
 * Compaction quality without a model: the scripted session generator is deterministic and valid, the
 * survival scorer counts what is in view (and nothing else), the server-side rule matches the fake
 * server's, and each strategy keeps what the SDK documents it keeps.
 */
import { toApiMessages, type Entry } from '../../src/core/entries';
import { estimateTextTokens } from '../../src/core/tokens';
import { DEFAULT_USER_MESSAGE_BUDGET_TOKENS } from '../../src/core/context/compaction/user-messages';
import { maskStaleToolResults } from '../../src/core/context/mask';
import {
  clearToolUses,
  compareStrategies,
  generateSession,
  InvalidEvalOptionsError,
  runStrategy,
  survival,
  type SessionTruth,
} from '../../bench/context-eval';
import { applyContextEdits } from '../../src/testing/anthropic/fake-anthropic-context-edits';
import { validateMessagesRequest } from '../../src/testing/anthropic/fake-anthropic';
import { call, results, say, summary, user } from './compaction-helpers';

describe('generateSession', () => {
  it('is deterministic: the same seed gives the same entries and truth, another seed another session', () => {
    const a = generateSession({ seed: 7 });
    const b = generateSession({ seed: 7 });
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(JSON.stringify(generateSession({ seed: 8 }).entries)).not.toBe(JSON.stringify(a.entries));
  });

  it('has exactly the requested model calls, a valid API history, and a truth drawn from it', () => {
    const s = generateSession({ seed: 3, modelCalls: 300 });
    expect(s.entries.filter((e) => e.type === 'assistant')).toHaveLength(300);
    expect(s.modelCalls).toBe(300);
    expect(validateMessagesRequest({ model: 'm', max_tokens: 1, messages: toApiMessages(s.entries) })).toBeUndefined();
    const text = JSON.stringify(s.entries);
    const users = s.entries.flatMap((e) => (e.type === 'user' ? [e.text] : []));
    for (const i of s.truth.instructions) expect(users).toContain(i);
    for (const f of s.truth.files) expect(text).toContain(JSON.stringify(f));
    expect(s.truth.instructions.length).toBeGreaterThan(2);
    expect(s.truth.openErrors.length).toBeGreaterThan(0);
    expect(s.truth.lastEvidence).toBeDefined();
    // The docs tail runs no verification: the last evidence is not among the newest 20 entries.
    const tail = JSON.stringify(s.entries.slice(-20));
    expect(s.truth.lastEvidence!.signature.some((line) => tail.includes(JSON.stringify(line).slice(1, -1)))).toBe(false);
  });

  it('without pasted logs is the same session with shorter prompts', () => {
    const a = generateSession({ seed: 4 });
    const b = generateSession({ seed: 4, pastedLogs: false });
    expect(b.truth).toEqual(a.truth);
    expect(b.entries).toHaveLength(a.entries.length);
    expect(JSON.stringify(a.entries)).toContain('Here is what I see in the logs:');
    expect(JSON.stringify(b.entries)).not.toContain('Here is what I see in the logs:');
  });

  it('names the bad option', () => {
    expect(() => generateSession({ seed: 1.5 })).toThrow(InvalidEvalOptionsError);
    expect(() => generateSession({ seed: 1, modelCalls: 3 })).toThrow(/'modelCalls'/);
  });
});

describe('survival', () => {
  const truth: SessionTruth = {
    instructions: ['Always use tabs.', 'Never touch config/.'],
    files: ['src/a.ts', 'src/b.ts'],
    openErrors: [{ id: 'e1', signature: 'Error: boom in a' }],
    lastEvidence: { command: 'npm test', signature: ['Tests:       3 passed, 3 total', 'Time:        1.5 s'] },
  };
  const full: Entry[] = [
    user('Always use tabs.'),
    user('Never touch config/.'),
    call([['r1', 'read_file', { path: 'src/a.ts' }]]),
    results([['r1', 'export const a = 1;']]),
    call([['b1', 'bash', { command: 'node run.js' }]]),
    results([['b1', 'Error: boom in a\n    at run.js:1:1', true]]),
    call([['w1', 'edit_file', { path: 'src/b.ts', old_string: 'x', new_string: 'y' }]]),
    results([['w1', 'Edited src/b.ts']]),
    call([['t1', 'bash', { command: 'npm test' }]]),
    results([['t1', 'PASS test/a.test.ts\nTests:       3 passed, 3 total\nTime:        1.5 s']]),
    say('done'),
  ];

  it('finds everything in the full history', () => {
    const s = survival(full, truth);
    expect(s.instructions).toEqual({ kept: 2, total: 2, lost: [] });
    expect(s.files).toEqual({ kept: 2, total: 2, lost: [] });
    expect(s.openErrors).toEqual({ kept: 1, total: 1, lost: [] });
    expect(s.lastEvidence).toBe(true);
  });

  it('counts what a summary carries, and misses what is gone', () => {
    const after: Entry[] = [
      summary({ summary: '## Goal\nwork', userMessages: ['Never touch config/.'], files: { read: ['src/a.ts'], modified: [] } }),
      call([['t1', 'bash', { command: 'npm test' }]]),
      results([['t1', 'Tests: 3 passed, 3 total\nTime: 1.5 s']]),
    ];
    const s = survival(after, truth);
    expect(s.instructions).toEqual({ kept: 1, total: 2, lost: ['Always use tabs.'] });
    expect(s.files).toEqual({ kept: 1, total: 2, lost: ['src/b.ts'] });
    expect(s.openErrors.kept).toBe(0);
    // Whitespace does not matter: the verdict lines are recognisably there.
    expect(s.lastEvidence).toBe(true);
  });

  it('takes a path only as a whole word, and needs every verdict line', () => {
    const s = survival([user('see src/a.tsx and xsrc/b.ts'), user('Tests:       3 passed, 3 total')], truth);
    expect(s.files.kept).toBe(0);
    expect(s.lastEvidence).toBe(false);
  });
});

describe('clearToolUses', () => {
  it('clears what the fake server clears for clear_tool_uses_20250919 (keep 3)', () => {
    const entries = generateSession({ seed: 5, modelCalls: 40 }).entries;
    const ours = toApiMessages(clearToolUses(entries, { triggerTokens: 0, keep: 3 }));
    const body = {
      messages: toApiMessages(entries),
      context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 0 }, keep: { type: 'tool_uses', value: 3 } }] },
    };
    const server = applyContextEdits(body, () => 1);
    expect(ours).toEqual(server.body.messages);
    expect(JSON.stringify(ours)).not.toBe(JSON.stringify(toApiMessages(entries)));
  });

  it('leaves a request under the trigger alone', () => {
    const entries = generateSession({ seed: 5, modelCalls: 40 }).entries;
    expect(clearToolUses(entries, { triggerTokens: 10_000_000, keep: 3 })).toEqual(entries);
  });
});

describe('strategies over a 300-call session', () => {
  const session = generateSession({ seed: 1 });

  /** User messages the compaction documents it keeps: verbatim in the window, or carried newest first within the budget. */
  function documentedKeep(view: readonly Entry[]): string[] {
    const inView = view.flatMap((e) => (e.type === 'user' ? [e.text] : []));
    const first = view[0];
    if (first?.type !== 'summary') return inView;
    // Compacted user messages: every user message of the session not in the verbatim window, newest first.
    const compacted = session.entries.flatMap((e) => (e.type === 'user' ? [e.text] : [])).slice(0, -inView.length || undefined).reverse();
    const carried: string[] = [];
    let room = DEFAULT_USER_MESSAGE_BUDGET_TOKENS;
    for (const text of compacted) {
      if (estimateTextTokens(text) > room) break;
      carried.push(text);
      room -= estimateTextTokens(text);
    }
    return [...carried, ...inView];
  }

  it('none keeps everything and overflows the window', async () => {
    const r = await runStrategy(session, 'none');
    expect(r.survival.instructions.kept).toBe(session.truth.instructions.length);
    expect(r.survival.files.kept).toBe(session.truth.files.length);
    expect(r.survival.openErrors.kept).toBe(session.truth.openErrors.length);
    expect(r.survival.lastEvidence).toBe(true);
    expect(r.callsOverWindow).toBeGreaterThan(0);
  });

  it.each(['summary-only', 'masking+summary'] as const)('%s loses none of the instructions the compaction documents it keeps, nor any file', async (name) => {
    const r = await runStrategy(session, name);
    expect(r.compactions).toBeGreaterThan(0);
    expect(r.callsOverWindow).toBe(0);
    const documented = new Set(documentedKeep(r.finalView));
    const expected = session.truth.instructions.filter((i) => documented.has(i));
    expect(expected.length).toBeGreaterThan(0);
    for (const i of expected) expect(r.survival.instructions.lost).not.toContain(i);
    expect(r.survival.files.lost).toEqual([]);
  });

  it('masking alone keeps every instruction and the last evidence, and sends less than no management', async () => {
    const masked = maskStaleToolResults(session.entries, { keepRecent: { entries: 20 } }).entries;
    const s = survival(masked, session.truth);
    expect(s.instructions.lost).toEqual([]);
    expect(s.lastEvidence).toBe(true);
    const [none, , maskingSummary] = await compareStrategies(session);
    expect(maskingSummary!.tokensSent).toBeLessThan(none!.tokensSent);
  });

  it('server-side clearing never removes a user message and stays within the window here', async () => {
    const r = await runStrategy(session, 'server-side');
    expect(r.survival.instructions.lost).toEqual([]);
    expect(r.compactions).toBe(0);
    expect(r.callsOverWindow).toBe(0);
  });

  it('is deterministic end to end', async () => {
    const strip = (rs: Awaited<ReturnType<typeof compareStrategies>>) => rs.map(({ finalView, ...rest }) => rest);
    expect(strip(await compareStrategies(generateSession({ seed: 1 })))).toEqual(strip(await compareStrategies(session)));
  });

  it('names an unknown strategy', async () => {
    await expect(runStrategy(session, 'magic' as never)).rejects.toThrow(/'strategy'/);
  });
});
