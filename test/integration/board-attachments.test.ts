/**
 * Attachments from the board, in real Chromium: a file dropped on the message box and one chosen with
 * the file picker go with the next message and reach the model as Anthropic's image and document blocks;
 * the conversation then names them (as text). Real dev server, worker and fake Anthropic server.
 */
import { startSession } from '@fabric-harness/sdk/client';
import { board, type BoardServer } from '@fabric-harness/sdk/board';
import { say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import type { Page } from 'playwright-core';
import { assistant } from '../fixtures/session-agents';
import { isTitleRequest, startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';
import { launchChromium } from './helpers/board-browser';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <</Type /Catalog>> endobj\n3 0 obj <</Type /Page>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n', 'latin1');

describe('fh board attachments', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let server: BoardServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const consoleLines: string[] = [];

  beforeAll(async () => {
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'board-attach', baseURL: fake.url });
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

  it('a file dropped on the message box and one picked reach the model with the message', async () => {
    const id = `board-attach-${process.pid}-${Date.now() % 100000}`;
    const s = await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, title: 'Attach from the board' });
    await page.goto(server.url);
    await page.locator(`.row[data-id="${id}"]`).click({ timeout: 30_000 });
    await page.locator('#compose').waitFor();

    // A drop: the browser's own DataTransfer holding a File, dispatched on the message box.
    const dropped = await page.evaluateHandle((b64) => {
      const dt = new DataTransfer();
      dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], 'failing-page.png', { type: 'image/png' }));
      return dt;
    }, PNG.toString('base64'));
    await page.dispatchEvent('#compose', 'drop', { dataTransfer: dropped });
    await page.locator('#files', { hasText: 'failing-page.png' }).waitFor();
    // The file picker.
    await page.setInputFiles('#attach', { name: 'spec.pdf', mimeType: 'application/pdf', buffer: PDF });
    await page.locator('#files', { hasText: 'spec.pdf' }).waitFor();

    const before = fake.requests.length;
    fake.enqueue(say('A page and a spec.'));
    await page.fill('textarea[aria-label="message"]', 'why does this page fail?');
    await page.click('#send');
    const sent = await until('the model call', async () => fake.requests.slice(before).find((r) => r.path === '/v1/messages' && !isTitleRequest(r)));
    const user = (sent.body.messages as Array<{ role: string; content: Array<{ type: string; source?: { media_type: string; data: string }; text?: string }> }>).at(-1)!;
    expect(user.content.map((b) => [b.type, b.source?.media_type ?? b.text])).toEqual([
      ['image', 'image/png'],
      ['document', 'application/pdf'],
      ['text', 'why does this page fail?'],
    ]);
    expect(user.content[0]!.source!.data).toBe(PNG.toString('base64'));
    expect(user.content[1]!.source!.data).toBe(PDF.toString('base64'));
    await page.locator('.msg.assistant', { hasText: 'A page and a spec.' }).waitFor({ timeout: 30_000 });
    // The conversation names the files; the staged list is empty again.
    await page.locator('.msg.user .chip.file', { hasText: 'failing-page.png' }).waitFor();
    expect(await page.locator('#files').count()).toBe(0);
    expect(consoleLines.filter((l) => /Content Security Policy/i.test(l))).toEqual([]);
    await s.end();
  }, 90_000);
});
