/**
 * Sharing a session on the real dev server: `shareSession` (and `fh session share`) writes one
 * self-contained page. A conversation with XSS attempts in the user's text, the model's reply and a
 * tool result is opened in Debian's chromium (playwright-core): no script runs, no request leaves the
 * page, the markup shows as text; secrets and the sandbox path are redacted.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { shareSession, startSession } from '@fabric-harness/sdk/client';
import { callTools, say, type FakeAnthropicServer } from '@fabric-harness/sdk/testing';
import { assistant } from '../fixtures/session-agents';
import { startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const XSS_USER = 'Look at <script>window.__pwned = "user"</script> and <img src=x onerror="window.__pwned=\'img\'">';
const XSS_MODEL = 'Done. <iframe src="javascript:window.__pwned=\'iframe\'"></iframe><svg onload="window.__pwned=\'svg\'"></svg> [x](javascript:alert(1))';
const SECRET = 'sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

describe('sharing a session', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let browser: Browser;

  beforeAll(async () => {
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'share', baseURL: fake.url });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await w?.stop();
    await fake?.stop();
  });

  it('writes one read-only page: XSS stays text, no script runs, secrets and the sandbox path are redacted', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-share-'));
    await fs.writeFile(path.join(dir, 'evil.html'), `<script>window.__pwned="tool"</script>\nANTHROPIC_API_KEY=${SECRET}\nat ${dir}/evil.html`);
    const session = await startSession(w.client, assistant, { taskQueue: w.taskQueue, title: 'Share <b>me</b>', settings: { workingDirectory: dir } });
    fake.enqueue(callTools({ name: 'read_file', input: { path: 'evil.html' } }), say(XSS_MODEL));
    expect(await session.prompt(XSS_USER)).toBe(XSS_MODEL);

    const out = path.join(dir, 'shared.html');
    const { html } = await shareSession(w.client, session.id, { out });
    expect(await fs.readFile(out, 'utf8')).toBe(html);
    // Strictly: every `<` of the conversation is escaped, so the page's tags are the renderer's own — a
    // fixed set, none with an event handler or a URL attribute.
    const tags = html.match(/<[a-zA-Z!/][^>]*>/g) ?? [];
    const names = new Set(tags.map((t) => /^<\/?!?([a-zA-Z][a-zA-Z0-9]*)/.exec(t)![1]!.toLowerCase()));
    expect([...names].sort()).toEqual(['body', 'div', 'doctype', 'h1', 'head', 'header', 'html', 'main', 'meta', 'pre', 'section', 'style', 'title']);
    expect(tags.filter((t) => /\son\w+\s*=|\s(?:src|href|action)\s*=/i.test(t))).toEqual([]);
    expect(html).toContain("script-src 'none'");
    expect(html).not.toContain(SECRET);
    expect(html).not.toContain(dir);

    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`file://${out}`);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(await page.evaluate(() => document.querySelectorAll('script, img, iframe, svg, object, embed').length)).toBe(0);
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).toContain('<script>window.__pwned = "user"</script>');
    expect(text).toContain('<svg onload=');
    expect(text).toContain('ANTHROPIC_API_KEY=[redacted]');
    expect(text).toContain('<workdir>/evil.html');
    expect(await page.title()).toBe((await session.info()).title);
    expect(requests).toEqual([`file://${out}`]);
    expect(dialogs).toEqual([]);
    await page.close();
    await session.end();
  });
});
