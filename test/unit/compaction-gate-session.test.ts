/**
 * The compaction gate through a real (inline) session against the scripted fake: a rule from the first
 * message that fell out of the verbatim user-message budget, and the next step, reach the model after
 * a summariser that dropped them; the compaction event and state carry the gate's result; /strict
 * gates only when asked.
 */
import { init, isEvent, type AgentEvent } from '@fabric-harness/sdk';
import { init as strictInit } from '@fabric-harness/sdk/strict';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { savedAnthropicEnv } from '../support/anthropic-env';

const MARKER = '[fabric-harness:summarize]';
const isSummary = (r: { body: any }) => String(r.body?.system ?? '').startsWith(MARKER);
const RULE = 'Always write the changelog entry in the past tense.';

let fake: FakeAnthropicServer;
const env = savedAnthropicEnv();
beforeEach(async () => {
  // A summariser that keeps nothing worth keeping.
  fake = await FakeAnthropicServer.start({ route: (req) => (isSummary(req) ? say('## Goal\nSomething about a project.') : undefined) });
  env.pointAt(fake.url);
});
afterEach(async () => {
  const left = fake.remaining();
  await fake.stop();
  expect(left).toBe(0);
});
afterAll(() => env.restore());

const modelRequests = () => fake.messageRequests().filter((r) => !isSummary(r));

/** A rule first, then enough long messages that the first one falls out of the 2,000-token verbatim budget. */
async function longSession(s: { prompt(t: string): Promise<unknown> }) {
  const prompts = [`Release prep. ${RULE}`, ...Array.from({ length: 12 }, (_, i) => `Note ${i}: ${'lorem ipsum dolor sit amet '.repeat(36)}`)];
  fake.enqueue(...prompts.slice(0, -1).map((_, i) => say(`ok ${i}`)), say('Next I will update CHANGELOG.md with the release notes.'));
  for (const p of prompts) await s.prompt(p);
}

it('default entry: the dropped rule and next step reach the next request; the event and state carry the result', async () => {
  const events: AgentEvent[] = [];
  const s = await (await init({ contextWindowTokens: 200_000, onEvent: (e) => events.push(e) })).session();
  await longSession(s);
  await s.compact({ keepRecentEntries: 2 });
  fake.enqueue(say('done'));
  await s.prompt('go on');
  const text: string = modelRequests().at(-1)!.body.messages[0].content[0].text;
  expect(text).toContain('## Facts Restated');
  expect(text).toContain(RULE);
  expect(text).toMatch(/## Resume Here\n- You were working on: Note 11[^\n]*\n- Your next step: Next I will update CHANGELOG\.md with the release notes\./);
  const compaction = events.find((e) => isEvent(e, 'compaction'));
  const gate = compaction && isEvent(compaction, 'compaction') ? compaction.data.gate : undefined;
  expect(gate).toMatchObject({ mode: 'restate', reasked: false });
  expect(gate!.byKind.rule).toEqual({ checked: 1, found: 0, restated: 1 });
  expect((await s.compactionState()).last?.gate).toEqual(gate);
});

it('/strict: no gate unless compaction.gate.enabled', async () => {
  const off = await (await strictInit({ contextWindowTokens: 200_000, compaction: {} })).session();
  await longSession(off);
  await off.compact({ keepRecentEntries: 2 });
  expect((await off.compactionState()).last?.gate).toBeUndefined();
  const on = await (await strictInit({ contextWindowTokens: 200_000, compaction: { gate: { enabled: true } } })).session();
  await longSession(on);
  await on.compact({ keepRecentEntries: 2 });
  expect((await on.compactionState()).last?.gate?.byKind.rule).toEqual({ checked: 1, found: 0, restated: 1 });
});
