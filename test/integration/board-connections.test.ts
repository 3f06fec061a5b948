/**
 * A session's model and connection on the board (real Chromium through playwright-core, the real dev
 * server and a worker with two connections, each its own fake Anthropic server): both are shown; the
 * connection is set from the page before the first message and the turn goes to that connection's
 * endpoint with the model set from the page; after the first message the connection control is
 * disabled and says why, the model still changes, and a change sent from a page that had not yet seen
 * the first message is refused with the session's CONNECTION_LOCKED message shown as text.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSession } from '@fabric-harness/sdk/client';
import { board, type BoardServer } from '@fabric-harness/sdk/board';
import { say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import type { Page, Route } from 'playwright-core';
import { assistant } from '../fixtures/session-agents';
import { isTitleRequest, startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';
import { ARTIFACTS, launchChromium } from './helpers/board-browser';

const turns = (fake: FakeAnthropicServer) => fake.messageRequests().filter((r) => r.path === '/v1/messages' && !isTitleRequest(r));

describe('model and connection on the board', () => {
  let fake1: FakeAnthropicServer;
  let fake2: FakeAnthropicServer;
  let w: TestWorker;
  let server: BoardServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let dir: string;

  beforeAll(async () => {
    fake1 = await startSessionFake();
    fake2 = await startSessionFake({ apiKey: 'k' });
    w = await startTestWorker({ name: 'board-conn', baseURL: fake1.url, connections: { alt: { provider: 'anthropic', baseURL: fake2.url, apiKey: 'k' } } });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-board-conn-'));
    server = await board({ client: w.client });
    browser = await launchChromium();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await w?.stop();
    await fake1?.stop();
    await fake2?.stop();
  });

  const connectionInput = () => page.locator('.shead input[aria-label="connection"]');
  const modelInput = () => page.locator('.shead input[aria-label="model"]');

  it('shows and sets the connection before the first message and the model at any time; then the connection is locked', async () => {
    const s = await startSession(w.client, assistant, { id: `board-conn-${process.pid}-${Date.now() % 100000}`, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    await page.goto(server.url);
    const row = page.locator(`.row[data-id="${s.id}"]`);
    await row.waitFor({ timeout: 30_000 });
    await row.click();
    await page.locator('#convo').waitFor();

    // Shown: the default connection, and an editable control for it before the first message.
    expect(await connectionInput().inputValue()).toBe('anthropic');
    expect(await connectionInput().isDisabled()).toBe(false);
    await connectionInput().fill('alt');
    await page.click('label:has(input[aria-label="connection"]) button');
    await until('the connection set from the page', async () => (await s.info()).settings.connection === 'alt');
    await modelInput().fill('claude-haiku-4-5');
    await page.click('label:has(input[aria-label="model"]) button');
    await until('the model set from the page', async () => (await s.info()).settings.model === 'claude-haiku-4-5');
    await until('the page showing both', async () => (await connectionInput().inputValue()) === 'alt' && (await modelInput().inputValue()) === 'claude-haiku-4-5');

    // The first message goes to alt's endpoint, with the model set from the page.
    const before1 = turns(fake1).length;
    fake2.enqueue(say('hello from alt'));
    expect(await s.prompt('hello')).toBe('hello from alt');
    expect(turns(fake2).map((r) => r.body.model)).toEqual(['claude-haiku-4-5']);
    expect(turns(fake1)).toHaveLength(before1);

    // Locked: the control is disabled and says why; the model still changes from the page.
    await until('the connection control disabled', async () => connectionInput().isDisabled());
    expect(await page.locator('#connection-locked').textContent()).toBe('locked after the first message');
    expect(await connectionInput().inputValue()).toBe('alt');
    await modelInput().fill('claude-opus-4-1');
    await page.click('label:has(input[aria-label="model"]) button');
    await until('the model changed after the first message', async () => (await s.info()).settings.model === 'claude-opus-4-1');
    await page.screenshot({ path: path.join(ARTIFACTS, 'connection-locked.png') });
    await s.end();
  });

  it("refuses a connection change from a page that had not seen the first message, showing the session's CONNECTION_LOCKED message", async () => {
    const s = await startSession(w.client, assistant, { id: `board-conn-late-${process.pid}-${Date.now() % 100000}`, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    await page.goto(server.url);
    const row = page.locator(`.row[data-id="${s.id}"]`);
    await row.waitFor({ timeout: 30_000 });
    await row.click();
    await page.locator('#convo').waitFor();
    expect(await connectionInput().isDisabled()).toBe(false);

    // The page's view of this session is held back (as on a slow network): it still offers the change.
    const held: Route[] = [];
    const view = (url: URL) => url.pathname === `/api/sessions/${s.id}`;
    await page.route(view, (route) => (route.request().method() === 'GET' ? void held.push(route) : route.continue()));
    fake1.enqueue(say('first reply'));
    expect(await s.prompt('first')).toBe('first reply');
    await connectionInput().fill('alt');
    await page.click('label:has(input[aria-label="connection"]) button');
    await until('the refusal shown on the page', async () => /CONNECTION_LOCKED|locked after its first message/.test((await page.locator('.shead .flash').textContent()) ?? ''));
    expect(await page.locator('.shead .flash').textContent()).toBe(
      "settings.connection: the session's connection is locked after its first message: it is 'anthropic' and cannot change to 'alt'. The model can change within 'anthropic'; start a new session to use 'alt'.",
    );
    expect((await s.info()).settings.connection).toBe('anthropic');

    // Let the view through: the page catches up, the control is disabled, and the message stays shown.
    await page.unroute(view);
    for (const r of held) await r.continue().catch(() => undefined);
    await until('the page catching up', async () => connectionInput().isDisabled());
    expect(await page.locator('.shead .flash').textContent()).toMatch(/locked after its first message/);
    await s.end();
  });

  // A refresh (every turn and live event makes one) rebuilds the header under a field being edited: the text
  // selected there to be replaced stays selected, so what is typed next replaces it rather than being appended.
  // (CI once set the model 'claude-haiku-4-5claude-opus-4-1' this way: Playwright's fill selects, then types.)
  it('keeps the selection in a field being edited across a refresh', async () => {
    const s = await startSession(w.client, assistant, { id: `board-conn-sel-${process.pid}-${Date.now() % 100000}`, taskQueue: w.taskQueue, settings: { workingDirectory: dir } });
    await page.goto(server.url);
    await page.locator(`.row[data-id="${s.id}"]`).click({ timeout: 30_000 });
    await page.locator('#convo').waitFor();
    await modelInput().fill('claude-haiku-4-5');
    await modelInput().selectText();
    await page.evaluate(() => { (document.querySelector('[aria-label="model"]') as HTMLInputElement & { fhOld?: true }).fhOld = true; });
    fake1.enqueue(say('a reply'));
    expect(await s.prompt('hello')).toBe('a reply');
    await until('the header rebuilt by a refresh', () =>
      page.evaluate(() => {
        const el = document.querySelector('[aria-label="model"]') as (HTMLInputElement & { fhOld?: true }) | null;
        return !!el && !el.fhOld && document.activeElement === el;
      }),
    );
    await page.keyboard.insertText('claude-opus-4-1');
    expect(await modelInput().inputValue()).toBe('claude-opus-4-1');
    await s.end();
  });
});
