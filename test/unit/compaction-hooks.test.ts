/**
 * init({ hooks: { beforeCompact, afterCompact } }) against the scripted fake, inline: a veto skips the
 * summary call, instructions reach the summary request, injected text reaches the next model request,
 * a throwing hook is an error event and the compaction still happens, bad options name the field.
 */
import { ContextWindowExceededError, init, isEvent, type AgentEvent } from '@fabric-harness/sdk';
import { FakeAnthropicServer, fail, say } from '@fabric-harness/sdk/testing';
import { savedAnthropicEnv } from '../support/anthropic-env';

const MARKER = '[fabric-harness:summarize]';
const isSummary = (r: { body: any }) => String(r.body?.system ?? '').startsWith(MARKER);

let fake: FakeAnthropicServer;
const env = savedAnthropicEnv();

beforeEach(async () => {
  fake = await FakeAnthropicServer.start({ route: (req) => (isSummary(req) ? say('## Goal\nModel summary.') : undefined) });
  env.pointAt(fake.url);
});
afterEach(async () => {
  const left = fake.remaining();
  await fake.stop();
  expect(left).toBe(0);
});
afterAll(() => {
  env.restore();
});

const summaryRequests = () => fake.messageRequests().filter(isSummary);
const modelRequests = () => fake.messageRequests().filter((r) => !isSummary(r));
const userTextOf = (r: { body: any }) => JSON.stringify(r.body.messages);

/** A session with three answered prompts (six entries), ready to compact. */
async function warmSession(opts: Record<string, unknown>, events: AgentEvent[]) {
  const s = await (await init({ contextWindowTokens: 100_000, onEvent: (e) => events.push(e), ...opts })).session();
  fake.enqueue(say('one'), say('two'), say('three'));
  for (const p of ['first', 'second', 'third']) await s.prompt(p);
  return s;
}

describe('beforeCompact', () => {
  it('a veto skips the compaction: no summary call, history kept, a COMPACTION_VETOED warning', async () => {
    const events: AgentEvent[] = [];
    const seen: Array<{ reason: string; entries: number; tokens: number }> = [];
    const s = await warmSession(
      {
        hooks: {
          beforeCompact: (ctx: { reason: string; entries: readonly unknown[]; tokens: number }) => {
            seen.push({ reason: ctx.reason, entries: ctx.entries.length, tokens: ctx.tokens });
            return { veto: true, reason: 'flushing memory first' };
          },
        },
      },
      events,
    );
    const result = await s.compact({ keepRecentEntries: 2 });
    expect(result.compactedEntries).toBe(0);
    expect(summaryRequests()).toHaveLength(0);
    expect(s.messages()).toHaveLength(6);
    expect(seen).toEqual([{ reason: 'manual', entries: 6, tokens: expect.any(Number) }]);
    expect(seen[0]!.tokens).toBeGreaterThan(0);
    const warnings = events.filter((e) => isEvent(e, 'warning')).map((e) => e.data);
    expect(warnings).toEqual([{ code: 'COMPACTION_VETOED', message: 'beforeCompact vetoed the manual compaction: flushing memory first' }]);
    expect(events.some((e) => e.type === 'compaction_started' || e.type === 'compaction')).toBe(false);
  });

  it('a threshold compaction vetoed: the model is called with the whole history', async () => {
    const events: AgentEvent[] = [];
    let calls = 0;
    const s = await warmSession({ compaction: { compactAtTokens: 20, keepRecentEntries: 2 }, hooks: { beforeCompact: () => (calls++, { veto: true }) } }, events);
    expect(calls).toBeGreaterThan(0);
    expect(summaryRequests()).toHaveLength(0);
    expect(modelRequests().at(-1)!.body.messages).toHaveLength(5);
    expect(s.messages()).toHaveLength(6);
    expect(events.filter((e) => isEvent(e, 'warning') && e.data.code === 'COMPACTION_VETOED')).toHaveLength(calls);
  });

  it('an overflow vetoed ends in ContextWindowExceededError, with no summary call and no loop', async () => {
    const events: AgentEvent[] = [];
    const reasons: string[] = [];
    const s = await warmSession({ hooks: { beforeCompact: (ctx: { reason: string }) => (reasons.push(ctx.reason), { veto: true }) } }, events);
    fake.enqueue(fail(400, { message: 'prompt is too long: 210000 tokens > 200000 maximum' }));
    await expect(s.prompt('fourth')).rejects.toBeInstanceOf(ContextWindowExceededError);
    expect(reasons).toEqual(['overflow']);
    expect(summaryRequests()).toHaveLength(0);
    expect(s.messages()).toHaveLength(6); // the failed prompt rolled back; nothing was lost
  });

  it('instructions are added to the summary request', async () => {
    const events: AgentEvent[] = [];
    const s = await warmSession({ hooks: { beforeCompact: () => ({ instructions: 'Keep every decision about the database schema.' }) } }, events);
    await s.compact({ keepRecentEntries: 2 });
    const [req] = summaryRequests();
    expect(req).toBeDefined();
    expect(userTextOf(req!)).toContain('Additional instructions for this summary:\\nKeep every decision about the database schema.');
  });
});

describe('afterCompact', () => {
  it('inject text is in the next model request, right after the summary, and the context says what it was given', async () => {
    const events: AgentEvent[] = [];
    const seen: unknown[] = [];
    const s = await warmSession(
      {
        hooks: {
          afterCompact: (ctx: { reason: string; summary: string; entriesBefore: number; entriesAfter: number; entries: readonly unknown[] }) => {
            seen.push({ reason: ctx.reason, summary: ctx.summary, before: ctx.entriesBefore, after: ctx.entriesAfter, entries: ctx.entries.length });
            return { inject: '## Memory\n- User prefers tabs.' };
          },
        },
      },
      events,
    );
    await s.compact({ keepRecentEntries: 2 });
    expect(seen).toEqual([{ reason: 'manual', summary: expect.stringContaining('Model summary.'), before: 6, after: 3, entries: 3 }]);
    fake.enqueue(say('four'));
    await s.prompt('fourth');
    const first = modelRequests().at(-1)!.body.messages[0];
    expect(first.role).toBe('user');
    const text: string = first.content[0].text;
    expect(text).toContain('[Context Summary]');
    expect(text.indexOf('## Memory\n- User prefers tabs.')).toBeGreaterThan(text.indexOf('Model summary.'));
  });

  it('a throwing hook is a recoverable error event, and the compaction still happens', async () => {
    const events: AgentEvent[] = [];
    const s = await warmSession(
      {
        hooks: {
          beforeCompact: () => {
            throw new Error('memory store down');
          },
          afterCompact: async () => {
            throw new Error('no memory file');
          },
        },
      },
      events,
    );
    const result = await s.compact({ keepRecentEntries: 2 });
    expect(result.compactedEntries).toBe(4);
    expect(summaryRequests()).toHaveLength(1);
    expect(s.messages()[0]).toMatchObject({ type: 'summary' });
    const errors = events.filter((e) => isEvent(e, 'error')).map((e) => e.data);
    expect(errors).toEqual([
      { code: 'COMPACTION_HOOK_FAILED', message: 'hooks.beforeCompact threw: memory store down', recoverable: true },
      { code: 'COMPACTION_HOOK_FAILED', message: 'hooks.afterCompact threw: no memory file', recoverable: true },
    ]);
    expect(events.some((e) => e.type === 'compaction')).toBe(true);
  });
});

describe('bad hook options', () => {
  it.each([
    ['beforeCompact', { beforeCompact: 'flush' }],
    ['afterCompact', { afterCompact: 42 }],
  ])('hooks.%s that is not a function is INVALID_INPUT naming the field', async (name, hooks) => {
    const err = await init({ hooks } as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'INVALID_INPUT', field: `hooks.${name}` });
    expect(String((err as Error).message)).toContain(`hooks.${name}: expected a function`);
  });

  it('an unknown hook name is INVALID_INPUT', async () => {
    await expect(init({ hooks: { onCompact: () => undefined } } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'hooks.onCompact' });
  });
});
