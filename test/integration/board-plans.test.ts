/**
 * A plan on the board (real Chromium through playwright-core, the real dev server and worker, the fake
 * Anthropic server scripted to call submit_plan): the plan's Markdown drawn as elements and text only
 * (markup in it stays text, links are not made), approved with a click and a switch to execute, after
 * which the agent's write runs.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSession } from '@fabric-harness/sdk/client';
import { board, type BoardServer } from '@fabric-harness/sdk/board';
import { callTools, say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import type { Page } from 'playwright-core';
import { assistant } from '../fixtures/session-agents';
import { startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { ARTIFACTS, launchChromium } from './helpers/board-browser';

const PLAN = [
  '# Plan <img src=x onerror="window.__xss=1">',
  '',
  '1. Write **plan.txt** with `done`',
  '2. See [the docs](javascript:window.__xss=2) <script>window.__xss=3</script>',
  '',
  '- a note',
  '',
  '```',
  '<img src=x onerror="window.__xss=4">',
  '```',
].join('\n');

describe('a plan on the board', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let server: BoardServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let dir: string;

  beforeAll(async () => {
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'board-plans', baseURL: fake.url });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-board-plan-'));
    server = await board({ client: w.client });
    browser = await launchChromium();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await w?.stop();
    await fake?.stop();
  });

  it('draws the plan as safe Markdown and approves it with a click, switching the session to execute', async () => {
    const s = await startSession(w.client, assistant, { id: `board-plan-${process.pid}-${Date.now() % 100000}`, taskQueue: w.taskQueue, settings: { workingDirectory: dir, permissionMode: 'explore' } });
    fake.enqueue(callTools({ name: 'submit_plan', input: { plan: PLAN } }), callTools({ name: 'write_file', input: { path: 'plan.txt', content: 'done' } }), say('Done as planned.'));
    const sent = await s.send('Make plan.txt');
    await page.goto(server.url);
    const row = page.locator(`.row[data-id="${s.id}"]`);
    await row.waitFor({ timeout: 30_000 });
    await row.click();
    const plan = page.locator('.approval.plan');
    await plan.waitFor({ timeout: 30_000 });

    const drawn = await page.evaluate(() => {
      const md = document.querySelector('.approval.plan .md')!;
      return {
        xss: (window as unknown as { __xss?: number }).__xss,
        heading: md.querySelector('h3')?.textContent,
        items: [...md.querySelectorAll('ol > li')].map((li) => li.textContent),
        bullets: [...md.querySelectorAll('ul > li')].map((li) => li.textContent),
        strong: md.querySelector('strong')?.textContent,
        code: md.querySelector('li code')?.textContent,
        pre: md.querySelector('pre')?.textContent,
        imgs: document.querySelectorAll('img').length,
        links: document.querySelectorAll('a').length,
        scripts: [...document.querySelectorAll('script')].map((x) => x.getAttribute('src')?.split('?')[0]),
      };
    });
    expect(drawn).toEqual({
      xss: undefined,
      heading: 'Plan <img src=x onerror="window.__xss=1">',
      items: ['Write plan.txt with done', 'See [the docs](javascript:window.__xss=2) <script>window.__xss=3</script>'],
      bullets: ['a note'],
      strong: 'plan.txt',
      code: 'done',
      pre: '<img src=x onerror="window.__xss=4">',
      imgs: 0,
      links: 0,
      scripts: ['/app.js', '/flows.js'],
    });
    await expect(fs.stat(path.join(dir, 'plan.txt'))).rejects.toThrow();
    await page.selectOption('.approval.plan select[aria-label="plan mode"]', 'execute');
    await page.fill('.approval.plan input[aria-label="note"]', 'go ahead');
    await page.screenshot({ path: path.join(ARTIFACTS, 'plan.png') });
    await page.click('.approval.plan button.approve-plan');

    expect(await s.reply(sent.messageId)).toBe('Done as planned.');
    expect(await fs.readFile(path.join(dir, 'plan.txt'), 'utf8')).toBe('done');
    expect(await s.plans()).toEqual([expect.objectContaining({ status: 'approved', mode: 'execute', note: 'go ahead', markdown: PLAN })]);
    expect((await s.info()).settings.permissionMode).toBe('execute');
    await page.locator('.approval.plan').waitFor({ state: 'detached', timeout: 30_000 });
    await s.end();
  });
});
