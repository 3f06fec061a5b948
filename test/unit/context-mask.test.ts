/**
 * Observation masking: stale tool results become one-line placeholders, verification evidence stays,
 * and the history stays valid for the API whatever it was.
 */
import fc from 'fast-check';
import { isPlaceholder, maskStaleToolResults, toolPlaceholder } from '../../src/core/context/mask';
import { isVerificationEvidence, preservePredicate } from '../../src/core/context/evidence';
import { InvalidToolResultOptionsError } from '../../src/core/context/errors';
import { toApiMessages, type Entry, type ToolResultsEntry } from '../../src/core/entries';
import { validateMessagesRequest } from '../../src/testing/anthropic/fake-anthropic';
import { call, results, say, user } from './compaction-helpers';

const file = (n: number) => Array.from({ length: n }, (_, i) => `export const v${i} = ${i};`).join('\n');
const JEST_OUTPUT = 'PASS test/a.test.ts\n' + 'x'.repeat(400) + '\nTests:       12 passed, 12 total\nTime: 1.2 s';

/** read_file, a web search, a test run, a write: then three recent reads. */
function history(): Entry[] {
  return [
    user('fix the app'),
    call([['r1', 'read_file', { path: 'src/app.ts' }]]),
    results([['r1', file(247)]]),
    call([['s1', 'search_web', { query: 'react hooks best practices' }], ['b1', 'bash', { command: 'npm test' }]]),
    results([['s1', 'result\n'.repeat(120)], ['b1', 'lots of output\n'.repeat(40)]]),
    call([['b2', 'bash', { command: 'node scripts/check.js' }]]),
    results([['b2', JEST_OUTPUT]]),
    call([['w1', 'write_file', { path: 'src/hooks/useAuth.ts', content: 'x' }]]),
    results([['w1', 'Wrote 1 line to src/hooks/useAuth.ts']]),
    say('tests pass'),
    user('now the footer'),
    call([['r2', 'read_file', { path: 'src/footer.ts' }]]),
    results([['r2', file(30)]]),
  ];
}

const resultOf = (entries: readonly Entry[], id: string) =>
  entries.flatMap((e) => (e.type === 'tool_results' ? e.results : [])).find((r) => r.tool_use_id === id)!;

describe('maskStaleToolResults', () => {
  it('replaces results older than the keep window with one-line placeholders', () => {
    const h = history();
    const r = maskStaleToolResults(h, { keepRecent: { entries: 4 } });
    expect(r.before).toBe(9);
    expect(resultOf(r.entries, 'r1').content).toBe(`[tool: read_file("src/app.ts") → 247 lines, ${file(247).length} chars]`);
    expect(resultOf(r.entries, 's1').content).toBe('[tool: search_web("react hooks best practices") → 120 lines, 840 chars]');
    // Short results are not worth a placeholder; recent ones stay.
    expect(resultOf(r.entries, 'w1').content).toBe('Wrote 1 line to src/hooks/useAuth.ts');
    expect(resultOf(r.entries, 'r2').content).toBe(file(30));
    expect(r.masked).toBe(2);
    expect(r.savedTokens).toBeGreaterThan(1000);
    // The input is not changed.
    expect(resultOf(h, 'r1').content).toBe(file(247));
  });

  it('keeps verification evidence by default: a test command, or a runner summary in the output', () => {
    const r = maskStaleToolResults(history(), { keepRecent: { entries: 1 } });
    expect(resultOf(r.entries, 'b1').content).toBe('lots of output\n'.repeat(40)); // `npm test`
    expect(resultOf(r.entries, 'b2').content).toBe(JEST_OUTPUT); // "Tests: 12 passed"
    // With no preserve rule at all they are masked like the rest.
    const none = maskStaleToolResults(history(), { keepRecent: { entries: 1 }, preserve: () => false });
    expect(isPlaceholder(resultOf(none.entries, 'b1').content)).toBe(true);
    expect(isPlaceholder(resultOf(none.entries, 'b2').content)).toBe(true);
  });

  it('the token window and the recorded boundary', () => {
    const h = history();
    // A budget that fits only the last pair: masks everything older that is worth masking.
    const byTokens = maskStaleToolResults(h, { keepRecent: { tokens: 1 } });
    expect(byTokens.before).toBe(11);
    // An entry window starting at tool results starts at their call instead (the boundary a decision records).
    expect(maskStaleToolResults(h, { keepRecent: { entries: 1 } }).before).toBe(11);
    expect(resultOf(byTokens.entries, 'r2').content).toBe(file(30));
    // A recorded boundary wins over the window (a replay masks what the recorded run masked).
    const recorded = maskStaleToolResults(h, { keepRecent: { entries: 1 }, before: 3 });
    expect(recorded.before).toBe(3);
    expect(isPlaceholder(resultOf(recorded.entries, 'r1').content)).toBe(true);
    expect(resultOf(recorded.entries, 's1').content).toBe('result\n'.repeat(120));
  });

  it('recorded ids win over the evidence rules: a replay under other preserve settings masks the same results', () => {
    const recorded = maskStaleToolResults(history(), { keepRecent: { entries: 1 } });
    expect(recorded.ids).toEqual(['r1', 's1']); // b1 and b2 are evidence; w1 is too short to be worth it
    for (const preserve of [() => false, () => true]) {
      const replayed = maskStaleToolResults(history(), { before: recorded.before, ids: recorded.ids, preserve });
      expect(replayed.entries).toEqual(recorded.entries);
    }
  });

  it('errors keep their first line in the placeholder', () => {
    const error = 'Error: ENOENT: no such file a.js\n' + '  at x\n'.repeat(60);
    const h: Entry[] = [user('x'), call([['e1', 'bash', { command: 'node a.js' }]]), results([['e1', error, true]]), user('y')];
    const r = maskStaleToolResults(h, { keepRecent: { entries: 1 } });
    const masked = resultOf(r.entries, 'e1');
    expect(masked).toMatchObject({ is_error: true, content: `[tool: bash("node a.js") → error, 61 lines, ${error.length} chars: "Error: ENOENT: no such file a.js"]` });
  });

  it('is idempotent: masking twice changes nothing more', () => {
    const once = maskStaleToolResults(history(), { keepRecent: { entries: 1 }, preserve: () => false });
    const twice = maskStaleToolResults(once.entries, { keepRecent: { entries: 1 }, preserve: () => false });
    expect(twice.entries).toEqual(once.entries);
    expect(twice.masked).toBe(0);
  });

  it('bad options name the option', () => {
    expect(() => maskStaleToolResults(history(), {})).toThrow(InvalidToolResultOptionsError);
    expect(() => maskStaleToolResults(history(), { keepRecent: { tokens: 0 } })).toThrow(/keepRecent\.tokens/);
    expect(() => maskStaleToolResults(history(), { before: -1 })).toThrow(/'before'/);
  });

  it('property: the history stays valid for the API, every tool_use keeps its tool_result, recent entries untouched', () => {
    const round = fc.record({
      calls: fc.array(fc.record({ name: fc.constantFrom('read_file', 'bash', 'grep'), arg: fc.string({ maxLength: 200 }), out: fc.string({ maxLength: 600 }), isError: fc.boolean() }), { minLength: 1, maxLength: 3 }),
      say: fc.option(fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim().length > 0), { nil: undefined }),
    });
    const spec = fc.array(fc.record({ prompt: fc.string({ minLength: 1, maxLength: 30 }).map((s) => `${s}x`), rounds: fc.array(round, { maxLength: 4 }) }), { minLength: 1, maxLength: 8 });
    const window = fc.record({ entries: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }), tokens: fc.option(fc.integer({ min: 1, max: 3000 }), { nil: undefined }) }).filter((w) => w.entries !== undefined || w.tokens !== undefined);
    fc.assert(
      fc.property(spec, window, fc.boolean(), (turns, keepRecent, keepEvidence) => {
        const h: Entry[] = [];
        let id = 0;
        for (const t of turns) {
          h.push(user(t.prompt));
          for (const r of t.rounds) {
            const ids = r.calls.map(() => `c${id++}`);
            h.push(call(r.calls.map((c, i) => [ids[i]!, c.name, c.name === 'bash' ? { command: c.arg } : { path: c.arg }]), r.say));
            h.push(results(r.calls.map((c, i) => [ids[i]!, c.out.repeat(3), c.isError])));
          }
        }
        const options = keepEvidence ? { keepRecent } : { keepRecent, preserve: () => false };
        const out = maskStaleToolResults(h, options);
        expect(out.entries).toHaveLength(h.length);
        out.entries.forEach((e, i) => {
          const o = h[i]!;
          expect(e.type).toBe(o.type);
          if (i >= out.before) expect(e).toBe(o); // the window is untouched
          if (e.type === 'tool_results') {
            const orig = (o as ToolResultsEntry).results;
            expect(e.results.map((r) => [r.tool_use_id, r.is_error])).toEqual(orig.map((r) => [r.tool_use_id, r.is_error]));
            e.results.forEach((r, j) => {
              expect(r.content.length).toBeLessThanOrEqual(orig[j]!.content.length);
              if (r.content !== orig[j]!.content) expect(isPlaceholder(r.content)).toBe(true);
            });
          } else expect(e).toBe(o);
        });
        const messages = [...toApiMessages(out.entries), ...(out.entries.at(-1)?.type === 'assistant' ? [{ role: 'user' as const, content: 'next' }] : [])];
        expect(validateMessagesRequest({ model: 'm', max_tokens: 1, messages })).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});

describe('verification evidence', () => {
  const bash = (command: string) => ({ type: 'tool_use' as const, id: 'x', name: 'bash', input: { command } });
  const out = (content: string) => ({ type: 'tool_result' as const, tool_use_id: 'x', content });

  it.each([
    'npm test', 'npm run build', 'pnpm typecheck', 'yarn test --watch=false', 'npx jest test/unit', 'npx tsc --noEmit', 'pytest -q',
    'python -m pytest tests/', 'go test ./...', 'cargo test', 'cargo build --release', 'make', 'make check', 'cd app && make test', './node_modules/.bin/jest --ci', 'mvn -q verify', './gradlew build',
  ])('the command %s', (command) => {
    expect(isVerificationEvidence(out('whatever'), bash(command))).toBe(true);
  });

  it.each(['ls -la', 'cat Makefile', 'git status', 'npm install', 'grep -r test src', 'cat src/jest.config.ts', 'vim tsc.json'])('not the command %s', (command) => {
    expect(isVerificationEvidence(out('whatever'), bash(command))).toBe(false);
  });

  it.each([
    'Tests:       1 failed, 11 passed, 12 total',
    '========== 3 passed, 1 failed in 0.42s ==========',
    'ok  \tgithub.com/x/y\t0.01s',
    'test result: ok. 4 passed; 0 failed',
    "src/a.ts(3,1): error TS2304: Cannot find name 'x'.",
    '  12 passing (30ms)',
    'BUILD SUCCESS',
  ])('the output %s', (content) => {
    expect(isVerificationEvidence(out(`noise\n${content}\nmore`), { type: 'tool_use', id: 'x', name: 'run', input: {} })).toBe(true);
  });

  it('reads only the head and tail of a huge output (a verdict in the middle is not one)', () => {
    const big = 'a'.repeat(10_000) + '\nTests: 1 passed, 1 total\n' + 'b'.repeat(10_000);
    expect(isVerificationEvidence(out(big), undefined)).toBe(false);
    expect(isVerificationEvidence(out(big + '\nTests: 1 passed, 1 total'), undefined)).toBe(true);
  });

  it('settings add tools and patterns, or turn the defaults off', () => {
    const shot = { type: 'tool_use' as const, id: 'x', name: 'screenshot', input: { url: 'http://localhost' } };
    expect(preservePredicate(undefined)(out('x'), bash('npm test'))).toBe(true);
    expect(preservePredicate({ defaults: false })(out('x'), bash('npm test'))).toBe(false);
    expect(preservePredicate({ tools: ['screenshot'] })(out('png'), shot)).toBe(true);
    expect(preservePredicate({ commands: ['^deno test'] })(out('x'), bash('deno test -A'))).toBe(true);
    expect(preservePredicate({ commands: ['localhost'] })(out('x'), shot)).toBe(true); // first string argument
    expect(preservePredicate({ results: ['^ALL GREEN$'] })(out('ALL GREEN'), undefined)).toBe(true);
    expect(preservePredicate({ defaults: false, tools: ['screenshot'] })(out('x'), bash('ls'))).toBe(false);
  });

  it('placeholder of a call that is not in view', () => {
    expect(toolPlaceholder(out('a\nb\n'), undefined)).toBe('[tool: unknown() → 2 lines, 4 chars]');
  });
});
