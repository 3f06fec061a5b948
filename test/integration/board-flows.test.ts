/**
 * Flow runs on the board, in real Chromium (Debian's, driven by playwright-core) against the real dev
 * server and a real worker: the page lists the run, draws its graph with each node's state and the
 * current node, answers the waiting gate (an unknown typed choice shows the typed error; a button
 * moves the run on), follows the run live to its end, and markup in a node label, an edge label, the
 * goal and context values stays text. Also: a flow's events are on its stream and not in its history,
 * and the flow API is behind the board's guard. Screenshots go to test-artifacts/board/.
 */
import { getEventListeners } from 'node:events';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { board, type BoardServer } from '@fabric-harness/sdk/board';
import { FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { temporal } from '@temporalio/proto';
import type { Page } from 'playwright-core';
import { startFlow, type FlowHandle } from '../../src/client/flows';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';
import { ARTIFACTS, launchChromium } from './helpers/board-browser';

const XSS = '<img src=x onerror=window.__xss=1><script>window.__xss=2</script>';
const CONTEXT_XSS = 'note: <img src=x onerror="window.__xss=3"> <a href="javascript:window.__xss=4">click</a>';

const dot = `digraph Ship {
  graph [goal="Tag it <b>now</b>"]
  start  [shape=Mdiamond]
  check  [label="${XSS}Check", script="echo '<img src=x onerror=window.__xss=5>'"]
  review [shape=hexagon, label="Ship it?"]
  ship   [label="Ship", script="echo shipped"]
  stop   [label="Stop", script="echo stopped"]
  exit   [shape=Msquare]
  start -> check -> review
  review -> ship [label="[A] Approve"]
  review -> stop [label="[S] <script>window.__xss=6</script>Stop"]
  ship -> exit
  stop -> exit
}`;

describe('flow runs on the board', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let server: BoardServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let workDir: string;
  const consoleLines: string[] = [];
  const fid = (p: string) => `${p}-${process.pid}-${Date.now() % 1_000_000}`;

  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    w = await startTestWorker({ name: 'board-flows', baseURL: fake.url });
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-board-flow-'));
    server = await board({ client: w.client });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await w?.stop();
    await fake?.stop();
  });

  const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  const nodeStates = () =>
    page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#flow-graph .fnode')].map((g) => [g.getAttribute('data-node'), g.getAttribute('data-state')])));

  async function openFlow(h: FlowHandle): Promise<void> {
    await page.goto(server.url);
    const row = page.locator(`.frow[data-flow="${h.workflowId}"]`);
    // Visibility lists a new run a moment after it starts.
    await until('the run in the flow list', async () => (await row.count()) === 1 || (await page.reload(), false));
    await row.click();
    await page.locator('#flow-graph').waitFor({ timeout: 30_000 });
  }

  it('draws the graph with node states, answers the gate from the page (an unknown choice is the typed error), and follows the run to its end', async () => {
    const h = await startFlow(w.client, dot, { workDir, taskQueue: w.taskQueue, workflowId: fid('board-ship'), context: { note: CONTEXT_XSS } });
    await openFlow(h);
    // Live: the page was opened before or while the run reached the gate; no reload from here on.
    await until('the gate waiting on the page', async () => (await nodeStates()).review === 'waiting');
    expect(await nodeStates()).toEqual({ start: 'succeeded', check: 'succeeded', review: 'waiting', ship: 'pending', stop: 'pending', exit: 'pending' });
    expect(await page.locator('#flow-graph .fnode.cur').getAttribute('data-node')).toBe('review');
    expect(await page.getAttribute('#flow', 'data-status')).toBe('waiting');
    // The list tells a run waiting at a gate from a running one (Temporal says RUNNING for both).
    const listed = async () => ((await (await fetch(`${server.origin}/api/flows`, { headers: { 'x-fh-board-token': server.token } })).json()) as { flows: Array<{ id: string; status: string; waitingGates?: string[] }> }).flows.find((f) => f.id === h.workflowId);
    await until('the gate in the list', async () => (await listed())?.waitingGates !== undefined);
    expect(await listed()).toMatchObject({ status: 'RUNNING', waitingGates: ['review'] });
    const other = await browser.context.newPage();
    await other.goto(server.url);
    const row = other.locator(`.frow[data-flow="${h.workflowId}"]`);
    await row.waitFor({ timeout: 30_000 });
    expect({ chip: await row.locator('.chip').textContent(), note: await row.locator('.note').textContent() }).toEqual({ chip: 'waiting', note: `at review · ${h.workflowId}` });
    await other.close();
    // Every edge is drawn, with its label.
    const edges = await page.evaluate(() => [...document.querySelectorAll('#flow-graph .fedge')].map((g) => `${g.getAttribute('data-from')}->${g.getAttribute('data-to')}:${g.querySelector('title')?.textContent ?? ''}`));
    expect(edges.sort()).toEqual(['check->review:', 'review->ship:[A] Approve', 'review->stop:[S] <script>window.__xss=6</script>Stop', 'ship->exit:', 'start->check:', 'stop->exit:'].sort());
    // The context without internal.* keys; the choices as buttons.
    const context = await page.textContent('#flow-context');
    expect(context).toContain(CONTEXT_XSS);
    expect(context).toContain('<img src=x onerror=window.__xss=5>');
    expect(context).not.toContain('internal.');
    expect(await page.locator('#flow-gate button.choice').allTextContents()).toEqual(['[A] Approve', '[S] <script>window.__xss=6</script>Stop']);
    await shot('flow-gate');

    // Markup from the DOT and the context is text: no element made from it, nothing ran.
    const found = await page.evaluate(() => ({
      xss: (window as unknown as { __xss?: number }).__xss,
      imgs: document.querySelectorAll('img').length,
      links: document.querySelectorAll('a').length,
      scripts: [...document.querySelectorAll('script')].map((s) => s.getAttribute('src')!.replace(/\?.*/, '')),
      label: document.querySelector('#flow-graph .fnode[data-node="check"] title')!.textContent,
      goal: document.querySelector('#flow .shead')!.textContent,
    }));
    expect(found).toMatchObject({ imgs: 0, links: 0, scripts: ['/app.js', '/flows.js'], label: `${XSS}Check (command): succeeded` });
    expect(found.xss).toBeUndefined();
    expect(found.goal).toContain('Goal: Tag it <b>now</b>');

    // A typed choice the gate does not offer: the typed error on the page, and the gate keeps waiting.
    await page.fill('#flow-gate input[aria-label="gate choice"]', 'X');
    await page.click('#gate-typed');
    await until('the typed error', async () => ((await page.textContent('#gate-error')) ?? '').includes('FLOW_UNKNOWN_CHOICE'));
    expect(await page.textContent('#gate-error')).toContain("Gate 'review' has no choice 'X'");
    expect((await h.state()).status).toBe('waiting');

    await page.click('#flow-gate button.choice[data-key="A"]');
    await until('the run completed on the page', async () => (await page.getAttribute('#flow', 'data-status')) === 'completed', 60_000);
    expect(await nodeStates()).toEqual({ start: 'succeeded', check: 'succeeded', review: 'succeeded', ship: 'succeeded', stop: 'skipped', exit: 'succeeded' });
    expect(await page.locator('#flow-gate').count()).toBe(0);
    await until('the run listed as completed, waiting at no gate', async () => (await listed())?.status === 'COMPLETED');
    expect((await listed())?.waitingGates).toBeUndefined();
    const result = await h.result();
    expect(result.context).toMatchObject({ 'human.gate.selected': 'A', 'command.output': 'shipped\n' });
    expect(await page.textContent('#flow-events')).toContain('review answered [A] Approve');
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    await shot('flow-done');
    expect(consoleLines.filter((l) => /Content Security Policy|Refused/.test(l))).toEqual([]);
  });

  it("a flow's events are on its stream, not in its history", async () => {
    const h = await startFlow(w.client, 'digraph Three { start [shape=Mdiamond]; a [script="echo a"]; b [script="echo b"]; exit [shape=Msquare]; start -> a -> b -> exit }', {
      workDir,
      taskQueue: w.taskQueue,
      workflowId: fid('board-stream'),
    });
    // Followed while it runs, with a signal: every long poll of the history is cancelled with the reader,
    // and none leaves its abort listener behind on the reader's signal.
    const follow = new AbortController();
    const names: string[] = [];
    let listeners = 0;
    for await (const { event } of h.stream({ signal: follow.signal })) {
      if (event.type === 'custom') names.push(event.name);
      listeners = Math.max(listeners, getEventListeners(follow.signal, 'abort').length);
    }
    await h.result();
    expect({ listeners, after: getEventListeners(follow.signal, 'abort').length }).toEqual({ listeners: expect.any(Number), after: 0 });
    expect(listeners).toBeLessThanOrEqual(1);
    expect(names.filter((n) => n === 'flow.stage_started')).toHaveLength(4);
    expect(names).toEqual(expect.arrayContaining(['flow.stage_started', 'flow.context_updated', 'flow.stage_finished']));
    // The history's bytes as the server keeps them (payloads are JSON inside): a stage's committed
    // updates are there (the search can find what is there), its events are not.
    const history = Buffer.from(temporal.api.history.v1.History.encode(await h.workflow.fetchHistory()).finish());
    expect(history.includes('command.output')).toBe(true);
    for (const name of new Set(names)) expect({ name, inHistory: history.includes(name) }).toEqual({ name, inHistory: false });
  });

  it('the flow API is behind the guard, and a bad gate answer is refused naming the field', async () => {
    expect((await fetch(`${server.origin}/flows.js`)).status).toBe(401);
    expect((await fetch(`${server.origin}/api/flows`)).status).toBe(401);
    const gate = (headers: Record<string, string>, body: string) =>
      fetch(`${server.origin}/api/flows/nope/gate`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect((await gate({ 'x-fh-board-token': server.token }, '{"choice":"A"}')).status).toBe(403);
    const ok = { 'x-fh-board-token': server.token, 'x-fh-board': '1' };
    const bad = await gate(ok, '{"choice":""}');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { field: string } }).error.field).toBe('choice');
    const missing = await gate(ok, '{"choice":"A"}');
    expect({ status: missing.status, body: await missing.json() }).toMatchObject({ status: 404, body: { error: { code: 'FLOW_NOT_FOUND' } } });
  });
});
