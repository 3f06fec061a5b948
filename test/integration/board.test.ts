/**
 * The board in real Chromium (Debian's, driven by playwright-core) against the real dev server, a real
 * worker and the fake Anthropic server: the inbox lists sessions; a sub-agent's work shows live, nested; approving from the page lets the tool
 * run once; interrupt; the gauge's layers and 70% hint; model output with markup stays text; the audit
 * view and its replay check; and the guard refuses requests without the token or from another site.
 * Screenshots go to test-artifacts/board/.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { COMPACT_UPDATE, listSessions, startSession, type SessionHandle } from '@fabric-harness/sdk/client';
import { board, type BoardServer } from '@fabric-harness/sdk/board';
import { callTools, reply, say, type FakeAnthropicServer, type FakeStep } from '@fabric-harness/sdk/testing';
import type { Page } from 'playwright-core';
import { assistant, longAssistant } from '../fixtures/session-agents';
import { nestingSession } from '../fixtures/ecosystem-agents';
import { startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';
import { ARTIFACTS, launchChromium } from './helpers/board-browser';

const XSS_TEXT = 'Here: <img src=x onerror="window.__xss=1"> <script>window.__xss=2</script> <a href="javascript:window.__xss=3">click me</a> [link](javascript:window.__xss=4)';

describe('fh board', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let server: BoardServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  /** What the browser logged: the page must work under its own CSP, so a violation is a failure. */
  const consoleLines: string[] = [];
  /** Every URL the browser asked for: the page works offline, from the board alone. */
  const requested: string[] = [];
  let dir: string;
  let n = 0;
  const sid = (p: string) => `${p}-${process.pid}-${Date.now() % 100000}-${n++}`;

  beforeAll(async () => {
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'board', baseURL: fake.url });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-board-cwd-'));
    server = await board({ client: w.client, agents: [path.resolve(__dirname, '../fixtures/session-agents.ts')] });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    page.on('request', (r) => requested.push(r.url()));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await w?.stop();
    await fake?.stop();
  });

  async function start(extra: Parameters<typeof startSession>[2] = {}, agent = assistant): Promise<SessionHandle> {
    return startSession(w.client, agent, { id: sid('board'), taskQueue: w.taskQueue, settings: { workingDirectory: dir }, ...extra });
  }

  /** Opens the board and a session in it. */
  async function open(id: string): Promise<void> {
    await page.goto(server.url);
    const row = page.locator(`.row[data-id="${id}"]`);
    await row.waitFor({ timeout: 30_000 });
    await row.click();
    await page.locator('#convo').waitFor();
  }

  const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });

  /**
   * Clicks one of a row's actions, which show while the row is hovered. The inbox re-renders every few
   * seconds, and on a shared dev server other suites' sessions move the rows, so a row can lose the hover
   * between the two steps: hover and click again until the click lands (once: a second click would undo).
   */
  async function rowAction(id: string, action: 'row-flag' | 'row-archive'): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await page.locator(`.row[data-id="${id}"]`).hover({ timeout: 5_000 }).catch(() => undefined);
      if (await page.click(`.row[data-id="${id}"] .${action}`, { timeout: 2_000 }).then(() => true, () => false)) return;
      if (attempt === 10) throw new Error(`could not click ${action} on the inbox row of ${id}`);
    }
  }

  it('refuses a request without the token, with a wrong one, and changes from another site', async () => {
    expect((await fetch(`${server.origin}/`)).status).toBe(401);
    expect((await fetch(`${server.origin}/api/sessions`)).status).toBe(401);
    expect((await fetch(`${server.origin}/app.js`)).status).toBe(401);
    const wrong = `${server.token.slice(0, -1)}${server.token.endsWith('x') ? 'y' : 'x'}`;
    expect((await fetch(`${server.origin}/api/sessions?token=${wrong}`)).status).toBe(401);
    const ok = await fetch(server.url);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(ok.headers.get('content-security-policy')).toContain("script-src 'self'");
    const post = (headers: Record<string, string>) =>
      fetch(`${server.origin}/api/sessions/nope/actions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"kind":"interrupt"}' });
    // The token in the URL is not enough for a change; neither is the header without the custom CSRF header.
    expect((await fetch(`${server.url.replace('/?', '/api/sessions/nope/actions?')}`, { method: 'POST', headers: { 'x-fh-board': '1' } })).status).toBe(403);
    expect((await post({ 'x-fh-board-token': server.token })).status).toBe(403);
    expect((await post({ 'x-fh-board-token': server.token, 'x-fh-board': '1', origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({ 'x-fh-board-token': server.token, 'x-fh-board': '1', 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    // A bad action is refused naming the field; a good one reaches the session (none here: not found).
    const bad = await fetch(`${server.origin}/api/sessions/nope/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-fh-board-token': server.token, 'x-fh-board': '1' },
      body: '{"kind":"approve"}',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { field: string } }).error.field).toBe('callId');
    expect((await post({ 'x-fh-board-token': server.token, 'x-fh-board': '1' })).status).toBe(404);
    // The browser is refused too without the token, and the page says why.
    await page.goto(`${server.origin}/`);
    expect(await page.textContent('body')).toContain('missing or wrong token');
  });

  it('lists sessions in the inbox with title, status, labels and flag, filters by label, and flags and archives from a row', async () => {
    const a = await start({ title: 'Inbox alpha', labels: { area: 'garden' } });
    const b = await start({ title: 'Inbox beta', labels: { area: 'kitchen' } });
    await b.flag(true);
    await page.goto(server.url);
    await until('both sessions listed', async () => (await page.locator(`.row[data-id="${a.id}"], .row[data-id="${b.id}"]`).count()) === 2 || (await page.reload(), false));
    const rowB = page.locator(`.row[data-id="${b.id}"]`);
    expect(await rowB.textContent()).toContain('Inbox beta');
    expect(await rowB.textContent()).toContain('area=kitchen');
    expect(await rowB.textContent()).toContain('todo');
    await until('the flag', async () => (await page.locator(`.row[data-id="${b.id}"] .flag`).count()) === 1 || (await page.reload(), false));
    await page.fill('#f-label', 'area=garden');
    await page.press('#f-label', 'Enter');
    await until('the label filter', async () => (await page.locator(`.row[data-id="${b.id}"]`).count()) === 0);
    expect(await page.locator(`.row[data-id="${a.id}"]`).count()).toBe(1);
    await shot('inbox');
    await page.fill('#f-label', '');
    await page.press('#f-label', 'Enter');
    // Flag and archive from the row itself.
    await rowAction(a.id, 'row-flag');
    await until('flagged from the inbox', async () => (await a.info()).flagged);
    await rowAction(a.id, 'row-archive');
    await until('archived from the inbox', async () => (await a.info()).archived);
    await until('gone from the unarchived inbox', async () => (await page.locator(`.row[data-id="${a.id}"]`).count()) === 0);
    await page.check('#f-archived');
    await page.locator(`.row[data-id="${a.id}"]`).waitFor({ timeout: 30_000 });
  });

  it('holds the inbox still under the mouse: a new session joins the rows once the pointer leaves them', async () => {
    const first = await start({ title: 'Hold still one' });
    await page.goto(server.url);
    const row = page.locator(`.row[data-id="${first.id}"]`);
    await until('the first session listed', async () => (await row.count()) === 1 || (await page.reload(), false));
    await row.hover();
    const second = await start({ title: 'Hold still two' });
    const added = page.locator(`.row[data-id="${second.id}"]`);
    await until('the second session in visibility', async () => (await listSessions(w.client)).some((x) => x.id === second.id));
    // The page refreshes every 5 s: wait for the refresh that has the new row, then for the page to hold
    // it (the rows say so), not for a time that should be long enough.
    const withSecond = await page.waitForResponse(
      async (r) => r.url().includes('/api/sessions?') && ((await r.json().catch(() => ({}))) as { sessions?: Array<{ id: string }> }).sessions?.some((x) => x.id === second.id) === true,
      { timeout: 30_000 },
    );
    await withSecond.finished();
    await page.locator('#rows[data-held]').waitFor({ state: 'attached', timeout: 10_000 });
    expect(await added.count()).toBe(0);
    await page.mouse.move(900, 500); // off the rows, onto the main pane
    await added.waitFor({ timeout: 10_000 });
    expect(await page.locator('#rows[data-held]').count()).toBe(0);
  });

  it('shows a reply progressively, as the model generates it', async () => {
    // The fake's streaming (pace, pause at a gate) and the session's stream come with the streaming work
    // (src/wire/stream.ts); typed loosely here so this file compiles before that work is merged.
    const streaming = fake as FakeAnthropicServer & { paused?(gate: string): Promise<void>; release?(gate: string): void };
    expect({ fakeStreams: typeof streaming.paused }).toEqual({ fakeStreams: 'function' });
    const s = await start();
    const text = 'Streaming arrives in pieces, word after word, until the end.';
    fake.enqueue(Object.assign(say(text), { stream: { chunkChars: 10, pauseAfterDeltas: 2, gate: 'board-half' } }));
    const sent = await s.send('Stream something.');
    await open(s.id);
    await streaming.paused!('board-half');
    // The model has sent two deltas and waits: the page shows them and nothing more.
    const live = page.locator('#live-text');
    await until('the first deltas on the page', async () => (await live.count()) === 1 && (await live.textContent())!.includes('Streaming arrives in'));
    expect(await live.textContent()).not.toContain('pieces');
    expect(await page.locator('.msg.assistant:not(.live)', { hasText: 'Streaming' }).count()).toBe(0);
    await shot('streaming');
    streaming.release!('board-half');
    await page.locator('.msg.assistant:not(.live)', { hasText: 'until the end.' }).waitFor({ timeout: 30_000 });
    expect(await s.reply(sent.messageId)).toBe(text);
    await until('the live text gone', async () => (await page.locator('#live-text').count()) === 0);
  });

  it('follows the session it switches to: its live text and reply show, and nothing of the one before draws into it', async () => {
    // A has finished turns, so its live channel's offset is well past anything B's stream has.
    const a = await start({ title: 'Switch from A' });
    for (const n of ['one', 'two', 'three']) {
      fake.enqueue(say(`A answers ${n}.`));
      await a.prompt(`A asks ${n}.`);
    }
    const b = await start({ title: 'Switch to B' });
    await open(a.id);
    await page.locator('.msg.assistant:not(.live)', { hasText: 'A answers three.' }).waitFor();
    // A turn while A is open: its reply shows through A's live channel, whose offset is now set.
    fake.enqueue(say('A answers four.'));
    await a.prompt('A asks four.');
    await page.locator('.msg.assistant:not(.live)', { hasText: 'A answers four.' }).waitFor({ timeout: 30_000 });
    // A fetch of A still in flight when B opens: held here, and let through once B is open.
    const heldA: Array<import('playwright-core').Route> = [];
    const isA = (u: URL) => u.pathname === `/api/sessions/${a.id}`;
    await page.route(isA, (route) => void heldA.push(route));
    await page.locator(`.row[data-id="${a.id}"]`).click();
    await until("A's fetch held", async () => heldA.length > 0);
    // Switch to B in the same page (no reload).
    const rowB = page.locator(`.row[data-id="${b.id}"]`);
    await rowB.waitFor({ timeout: 30_000 });
    const eventsB = page.waitForRequest((r) => new URL(r.url()).pathname === `/api/sessions/${b.id}/events`);
    await rowB.click();
    await until("B's header", async () => (await page.inputValue('.shead input[aria-label="title"]').catch(() => '')) === 'Switch to B');
    await eventsB;
    await page.unroute(isA);
    for (const route of heldA) await route.continue().catch(() => undefined); // the page may have given up on it already
    // B streams, gated halfway: its live text shows the first deltas.
    const text = 'B streams its answer in pieces, then ends.';
    fake.enqueue(say(text, { stream: { chunkChars: 8, pauseAfterDeltas: 2, gate: 'board-switch' } }));
    const sent = await b.send('Stream, B.');
    await fake.paused('board-switch');
    const live = page.locator('#live-text');
    await until("B's first deltas live", async () => (await live.count()) === 1 && (await live.textContent())!.includes('B streams its an'), 15_000);
    expect(await live.textContent()).not.toContain('pieces');
    // A answers while B is open: none of it reaches B's page.
    fake.enqueue(say('LATE FROM A, not for B.'));
    await a.prompt('A asks again.');
    fake.release('board-switch');
    expect(await b.reply(sent.messageId)).toBe(text);
    // B's reply is in its conversation soon after its turn ends, without a reload.
    await page.locator('.msg.assistant:not(.live)', { hasText: 'then ends.' }).waitFor({ timeout: 10_000 });
    await until('the live text gone', async () => (await page.locator('#live-text').count()) === 0, 10_000);
    const shown = (await page.textContent('#session'))!;
    expect({ late: shown.includes('LATE FROM A'), a: shown.includes('A answers'), error: shown.includes('Cannot open') }).toEqual({ late: false, a: false, error: false });
    expect(await page.inputValue('.shead input[aria-label="title"]')).toBe('Switch to B');
  });

  it("shows a sub-agent's work live in a box of its own, nested by depth, as text, apart from the session's reply", async () => {
    fake.enqueue(
      callTools({ name: 'eco-middle', input: { task: 'find out' } }), // the session hands over
      { ...reply({ content: ['The middle agent thinks aloud first.', { name: 'eco-helper', input: { task: 'the real work' } }], stopReason: 'tool_use' }), stream: { chunkChars: 6, pauseAfterDeltas: 2, gate: 'board-middle' } } as FakeStep,
      say('GRANDCHILD <img src=x onerror="window.__xss=9"> answers', { stream: { chunkChars: 5, pauseAfterDeltas: 3, gate: 'board-helper' } }),
      say('The helper found it.'), // the middle agent's last call
      say('Done: found.'), // the session
    );
    const s = await startSession(w.client, nestingSession, { id: sid('board-nest'), taskQueue: w.taskQueue, title: 'Nesting' });
    await s.send('Delegate it.');
    await open(s.id);
    const middle = page.locator('.subagent[data-workflow^="eco-middle-"]');
    const helper = page.locator('.subagent[data-workflow^="eco-helper-"]');
    // The middle agent has streamed two deltas and waits: its box shows them, and nothing more.
    await fake.paused('board-middle');
    await until("the middle agent's first deltas", async () => (await middle.count()) === 1 && (await middle.textContent())!.includes('The middle a'));
    expect(await middle.textContent()).toContain('sub-agent eco-middle · working');
    expect(await middle.textContent()).not.toContain('aloud');
    // The session's own running call (the hand-over) is drawn once: in the conversation, not again live.
    expect(await page.locator('.tool', { hasText: '⚙ eco-middle' }).count()).toBe(1);
    // Not the session's reply: the session's own live text and conversation do not hold it.
    expect(await page.locator('#live-text').count()).toBe(0);
    expect(await page.locator('.msg.assistant:not(.live)', { hasText: 'The middle' }).count()).toBe(0);
    fake.release('board-middle');
    // The grandchild's box, one level deeper, while both still run; its markup stays text.
    await fake.paused('board-helper');
    await until("the helper's first deltas", async () => (await helper.count()) === 1 && (await helper.textContent())!.includes('GRANDCHILD <img'));
    expect(await helper.textContent()).toContain('sub-agent eco-middle › eco-helper · working');
    expect(await middle.textContent()).toContain('The middle agent thinks aloud first.');
    const indent = await page.evaluate(() => [...document.querySelectorAll('.subagent')].map((e) => (e as HTMLElement).style.marginLeft));
    expect(indent).toEqual(['0px', '16px']);
    expect(await page.evaluate(() => ({ xss: (window as unknown as { __xss?: number }).__xss, imgs: document.querySelectorAll('img').length }))).toEqual({ xss: undefined, imgs: 0 });
    await shot('sub-agents');
    fake.release('board-helper');
    // The session's turn ends: its reply is in the conversation, and the live boxes are gone.
    await page.locator('.msg.assistant:not(.live)', { hasText: 'Done: found.' }).waitFor({ timeout: 30_000 });
    await until('the sub-agent boxes gone', async () => (await page.locator('.subagent').count()) === 0);
    await s.end();
  });

  it('approving from the page lets the tool run once, denying with a note keeps it from running, and the header renames and changes settings', async () => {
    const s = await start({ settings: { workingDirectory: dir, permissionMode: 'ask' } });
    const file = path.join(dir, `approved-${s.id}.txt`);
    fake.enqueue(callTools({ name: 'write_file', input: { path: path.basename(file), content: 'written once\n' } }), say('The file is written.'));
    const sent = await s.send('Write the file.');
    await open(s.id);
    const approval = page.locator('.approval');
    await approval.waitFor({ timeout: 30_000 });
    expect(await approval.textContent()).toContain('write_file');
    await expect(fs.stat(file)).rejects.toThrow();
    // The inbox (another page's) shows the session as waiting for approval, not merely in progress.
    const other = await browser.context.newPage();
    const chip = other.locator(`.row[data-id="${s.id}"] .chip.waiting-approval`);
    await until('the inbox row waiting for approval', async () => {
      await other.goto(server.url);
      await other.locator(`.row[data-id="${s.id}"]`).waitFor({ timeout: 30_000 });
      return (await chip.count()) === 1;
    });
    expect(await chip.textContent()).toBe('approval: write_file');
    await other.close();
    await page.fill('.approval input', 'looks fine');
    await shot('approval');
    await page.click('.approval button.approve');
    expect(await s.reply(sent.messageId)).toBe('The file is written.');
    expect(await fs.readFile(file, 'utf8')).toBe('written once\n');
    const results = (await s.events()).filter((e) => e.type === 'tool_result');
    expect(results).toHaveLength(1);
    const decided = (await s.events()).find((e) => e.type === 'approval_decided');
    expect(decided?.data).toMatchObject({ approved: true, note: 'looks fine' });
    await page.locator('.msg.assistant:not(.live)', { hasText: 'The file is written.' }).waitFor();
    await until('the approval gone from the page', async () => (await page.locator('.approval').count()) === 0);

    await page.fill('.shead input[aria-label="title"]', 'Renamed from the board');
    await page.click('text=Rename');
    await until('the new title', async () => (await s.info()).title === 'Renamed from the board');

    // Denied with a note: the tool does not run, and the model is told.
    const denied = path.join(dir, `denied-${s.id}.txt`);
    fake.enqueue(callTools({ name: 'write_file', input: { path: path.basename(denied), content: 'never\n' } }), say('Understood, not written.'));
    const second = await s.send('Write another file.');
    await page.locator('.approval').waitFor({ timeout: 30_000 });
    await page.fill('.approval input', 'not this one');
    await page.click('.approval button.deny');
    expect(await s.reply(second.messageId)).toBe('Understood, not written.');
    await expect(fs.stat(denied)).rejects.toThrow();
    expect((await s.events()).filter((e) => e.type === 'approval_decided').map((e) => e.data)).toEqual([
      expect.objectContaining({ approved: true, note: 'looks fine' }),
      expect.objectContaining({ approved: false, note: 'not this one' }),
    ]);

    // Settings from the header: permission mode, thinking level, model.
    await page.selectOption('select[aria-label="permission"]', 'execute');
    await until('permission mode execute', async () => (await s.info()).settings.permissionMode === 'execute');
    await page.selectOption('select[aria-label="thinking"]', 'low');
    await until('thinking low', async () => (await s.info()).settings.thinking === 'low');
    await page.fill('input[aria-label="model"]', 'claude-haiku-4-5');
    await page.click('label:has(input[aria-label="model"]) button');
    await until('the model changed', async () => (await s.info()).settings.model === 'claude-haiku-4-5');
  });

  it('interrupts a running turn from the page', async () => {
    const s = await start();
    fake.enqueue(callTools({ name: 'bash', input: { command: 'sleep 60' } }));
    await s.send('Sleep for a minute.');
    await until('the turn running', async () => (await s.info()).processing);
    await open(s.id);
    await page.locator('#interrupt').waitFor({ timeout: 30_000 });
    await page.locator('.tool', { hasText: 'sleep 60' }).first().waitFor();
    await shot('running');
    await page.click('#interrupt');
    await until('the turn interrupted', async () => !(await s.info()).processing);
    expect((await s.events()).some((e) => e.type === 'interrupted')).toBe(true);
    await until('the page showing it idle', async () => (await page.locator('#interrupt').count()) === 0, 15_000);
  });

  it('shows the context gauge by layer with the reserve, the threshold and the hint past 70%, updating live', async () => {
    const s = await start({}, longAssistant);
    fake.enqueue(callTools({ name: 'read_file', input: { path: 'nothing-here.txt' } }), say('First answer.'));
    await s.prompt('Start.');
    const budget = (await s.contextBudget())!;
    await open(s.id);
    const layers = await page.locator('#gauge tr[data-layer]').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.layer));
    expect(layers).toEqual(['system', 'tools', 'memory', 'summary', 'conversation', 'toolResults', 'reserve', 'threshold']);
    expect(await page.locator('#hint').count()).toBe(0);
    expect(await page.locator('#gauge').textContent()).toContain('cache hit rate');
    // The model reports a prompt of 85% of the room for history: the gauge passes 70% and hints.
    const big = budget.layers.systemPrompt + budget.layers.toolDefinitions + Math.round(0.85 * budget.availableForHistory);
    fake.enqueue(say('Second answer.', { usage: { input_tokens: big, output_tokens: 3 } }));
    await s.prompt('Again.');
    expect((await s.contextBudget())!.historyPercentOfAvailable).toBeGreaterThan(70);
    await page.locator('#hint').waitFor({ timeout: 30_000 });
    expect(await page.locator('#hint').textContent()).toContain('70%');
    // The bar is drawn (its widths are set through the CSSOM, which the CSP allows): history fills most of it.
    const after = (await s.contextBudget())!;
    // The bar and its segments in one read: a live update redraws the gauge, and two reads could straddle it.
    // Read in the page from the gauge drawn at that moment: a locator resolves its element first, and a live
    // redraw in between leaves it detached, all widths 0 (CI saw 0 / 0).
    const readBar = () =>
      page.evaluate(() => {
        const bar = document.querySelector('#gauge .bar');
        return {
          barWidth: bar?.getBoundingClientRect().width ?? 0,
          widths: [...(bar?.querySelectorAll(':scope > span') ?? [])].map((el) => [el.className, el.getBoundingClientRect().width] as const),
        };
      });
    const { widths, barWidth } = await until('the gauge bar drawn', async () => {
      const read = await readBar();
      return read.barWidth > 0 ? read : undefined;
    }, 15_000);
    const conversation = widths.find(([c]) => c === 'seg-conversation')![1];
    expect(conversation / barWidth).toBeCloseTo(after.layers.history / after.contextWindowTokens, 1);
    expect(widths.find(([c]) => c === 'thr')).toBeDefined();
    const shown = await page.locator('#gauge tr[data-layer="conversation"] td.n').textContent();
    expect(shown).toBe(`${((after.layers.history - Number((await page.locator('#gauge tr[data-layer="toolResults"] td.n').textContent()) ?? 0)) / 1000).toFixed(1)}k`);
    expect(consoleLines.filter((l) => /Content Security Policy/i.test(l))).toEqual([]);
    await shot('gauge');
  });

  it('shows a compaction summary where it replaced the older entries, with its reason and the gate result', async () => {
    const s = await start({}, longAssistant);
    for (const n of ['one', 'two', 'three']) {
      fake.enqueue(say(`Answer ${n}.`));
      await s.prompt(`Question ${n}.`);
    }
    fake.enqueue(say('## Goal\nAnswer three questions.\n## Progress\nAnswered one and two.'));
    await s.workflow.executeUpdate(COMPACT_UPDATE, { args: [{ keepRecentEntries: 2 }] });
    await open(s.id);
    const decision = page.locator('.decision', { hasText: 'Compaction summary' });
    await decision.waitFor({ timeout: 30_000 });
    // The compaction gate's result on the marker (the default entry gates every compaction).
    expect(await decision.textContent()).toMatch(/reason: manual · \d+ → \d+ tokens · gate: \d+ facts?, \d+ restated/);
    expect(await decision.textContent()).toContain('Answered one and two.');
    // Where it happened: before the entries it kept, after nothing (it replaced everything older).
    const order = await page.locator('#convo > *').evaluateAll((els) => els.map((e) => (e.classList.contains('decision') ? 'summary' : (e.textContent ?? '').slice(0, 40))));
    expect(order[0]).toBe('summary');
    expect(order.slice(1).join('|')).toContain('Answer three.');
    expect(order.slice(1).join('|')).not.toContain('Question one.');
    await shot('compaction');
  });

  it('renders markup in model text, tool input and tool output as text: nothing runs, no element is made', async () => {
    const s = await start({ title: '<img src=x onerror="window.__xss=5">' });
    fake.enqueue(
      callTools({ name: 'bash', input: { command: `printf '%s' '<script>window.__xss=6</script><img src=x onerror=window.__xss=7>'`, note: '<img src=x onerror="window.__xss=8">' } }),
      say(XSS_TEXT),
    );
    await s.prompt('Show me some HTML.');
    await open(s.id);
    await page.locator('.msg.assistant:not(.live)', { hasText: 'click me' }).waitFor();
    await page.click('.tool details summary');
    const found = await page.evaluate(() => ({
      xss: (window as unknown as { __xss?: number }).__xss,
      imgs: document.querySelectorAll('img').length,
      links: document.querySelectorAll('a').length,
      scripts: [...document.querySelectorAll('script')].map((s) => s.getAttribute('src')?.split('?')[0]),
      reply: [...document.querySelectorAll('.msg.assistant')].map((m) => m.textContent).join('\n'),
      result: document.querySelector('.tool pre.result')?.textContent,
      input: document.querySelector('.tool pre.input')?.textContent,
      title: (document.querySelector('.shead input[aria-label="title"]') as HTMLInputElement).value,
    }));
    expect(found.xss).toBeUndefined();
    expect(found.imgs).toBe(0);
    expect(found.links).toBe(0);
    expect(found.scripts).toEqual(['/app.js', '/flows.js']); // the page's two scripts (sessions, flow runs), nothing else
    expect(found.reply).toContain(XSS_TEXT);
    expect(found.result).toContain('<script>window.__xss=6</script><img src=x onerror=window.__xss=7>');
    expect(found.input).toContain('<img src=x onerror=\\"window.__xss=8\\">');
    // Titles are sanitised by the SDK (no angle brackets); what is left is shown as it is.
    expect(found.title).toBe((await s.info()).title);
    expect(requested.filter((u) => !u.startsWith(`${server.origin}/`))).toEqual([]);
    await shot('xss');
  });

  it("shows a session's audit transcript and the replay check's verdict", async () => {
    const s = await start();
    fake.enqueue(say('Audited reply. <img src=x onerror="window.__xss=9">'));
    await s.prompt('Something to audit.');
    await open(s.id);
    await page.click('#tab-audit');
    await page.locator('#audit-md').waitFor({ timeout: 30_000 });
    const md = (await page.textContent('#audit-md'))!;
    expect(md).toContain('Something to audit.');
    expect(md).toContain('Audited reply. <img src=x onerror="window.__xss=9">');
    expect(await page.evaluate(() => ({ imgs: document.querySelectorAll('img').length, xss: (window as unknown as { __xss?: number }).__xss }))).toEqual({ imgs: 0 });
    await page.click('#replay');
    await page.locator('#verdict.verdict').waitFor({ timeout: 110_000 });
    expect(await page.textContent('#verdict')).toMatch(/^ok: the current code makes the same decisions/);
    await shot('audit');
  });
});
