/**
 * The context-management bench (bench/context-management.js) cannot rot: its scripted session has
 * exactly the tool calls it claims, and a small variant runs end to end through a real Session and the
 * fake server over HTTP. The bench takes the SDK from src/ here (deps), so no build is needed.
 */
import * as sdk from '@fabric-harness/sdk';
import * as testing from '@fabric-harness/sdk/testing';
import * as evaluation from '../../bench/context-eval';

const bench = require('../../bench/context-management.js');

const deps = { sdk, testing, evaluation };
const quiet = { log: () => undefined, bytes: String, seconds: String };

interface Prompt {
  text: string;
  steps: Array<{ final: boolean; call?: { name: string } }>;
}

describe('context-management bench', () => {
  it('scripts exactly 300 tool calls, every prompt ending on a final reply, the same every time', () => {
    const script = bench.scriptedSession(evaluation, { toolCalls: 300 });
    const prompts: Prompt[] = script.prompts;
    const calls = prompts.flatMap((p) => p.steps.filter((s) => !s.final));
    expect(calls).toHaveLength(300);
    expect(script.session.entries.filter((e: any) => e.type === 'assistant' && e.content.some((b: any) => b.type === 'tool_use'))).toHaveLength(300);
    for (const p of prompts) expect(p.steps.at(-1)!.final).toBe(true);
    // Tool-heavy: reads, edits and test runs all occur.
    const names = new Set(calls.map((c) => c.call!.name));
    expect([...names].sort()).toEqual(['bash', 'edit_file', 'read_file', 'write_file']);
    // Every standing instruction reaches the session in some prompt.
    for (const instruction of script.session.truth.instructions) expect(prompts.some((p) => p.text.includes(instruction))).toBe(true);
    expect(bench.scriptedSession(evaluation, { toolCalls: 300 }).prompts).toEqual(prompts);
  });

  it('runs a 20-call variant end to end: every configuration, real usage from the fake server', async () => {
    const rows = await bench.measure(quiet, { toolCalls: 20, deps });
    const script = bench.scriptedSession(evaluation, { toolCalls: 20 });
    const names = bench.configurations(deps).flatMap((c: { name: string; caching: boolean[] }) => c.caching.map(() => c.name));
    expect(rows.map((r: Record<string, unknown>) => r.configuration)).toEqual(names);
    for (const row of rows) {
      const m = row.measured;
      expect(m.overflowAt).toBeUndefined();
      expect(m.modelCalls).toBe(script.modelCalls);
      expect(m.inputTokens).toBeGreaterThan(0);
      expect(m.peakTokens).toBeGreaterThan(0);
      if (row.caching === 'off') expect(m.cacheRead + m.cacheWrite).toBe(0);
      else expect(m.cacheRead).toBeGreaterThan(0);
    }
  });
});
