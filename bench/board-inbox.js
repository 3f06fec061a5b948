/**
 * board-inbox: the board's inbox over 1,000 sessions: the JSON answer (`GET /api/sessions`, visibility only)
 * and the page in Debian's Chromium (navigation until every row is drawn).
 *
 * Starts N session-shaped workflows (default 1,000) of a type no worker serves, with the session search
 * attributes, waits until visibility has indexed them, starts `board()` on them, then times the API and the page
 * (median of several runs each) and terminates the workflows. Needs /usr/bin/chromium (scripts/chromium.js).
 *
 *   BENCH_SESSIONS=1000   how many sessions
 *   BENCH_BOARD_RUNS=5    timed runs (the median is reported)
 */
'use strict';
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { board } = require('../dist/board/index.js');
const { FH_SEARCH_ATTRIBUTES, labelKeywords, sessionSearchAttributes, FH_KIND, SESSION_KIND } = require('../dist/wire/search-attributes.js');

const STATUSES = ['todo', 'in-progress', 'needs-review', 'done', 'cancelled'];
const CONCURRENCY = 32;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const { positiveInt } = require('./env-int.js');

async function eachLimited(items, limit, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  }));
}

module.exports = {
  name: 'board-inbox',
  description: "the board's inbox over 1,000 sessions: GET /api/sessions, and the page drawn in Chromium",
  async run(ctx) {
    const total = positiveInt('BENCH_SESSIONS', 1000);
    const runs = positiveInt('BENCH_BOARD_RUNS', 5);
    const { chromium } = require('playwright-core');
    const server = await startDevServer({ searchAttributes: { ...FH_SEARCH_ATTRIBUTES }, onProgress: ctx.log });
    const client = server.env.client;
    const agent = `bench-board-${Date.now().toString(36)}`;
    const ids = Array.from({ length: total }, (_, i) => `${agent}-${String(i).padStart(5, '0')}`);
    const started = [];
    let b;
    let browser;
    try {
      const now = Date.now();
      await eachLimited(ids, CONCURRENCY, async (workflowId, i) => {
        await client.workflow.start('BenchSession', {
          taskQueue: 'bench-board-no-worker',
          workflowId,
          typedSearchAttributes: [
            { key: FH_KIND, value: SESSION_KIND },
            ...sessionSearchAttributes({
              agent,
              status: STATUSES[i % STATUSES.length],
              title: `Session ${i}`,
              labels: labelKeywords({ area: ['billing', 'auth'][i % 2] }),
              flagged: i % 7 === 0,
              archived: false,
              model: 'claude-bench',
              lastMessageAt: now - i * 1000,
            }),
          ],
        });
        started.push(workflowId);
      });
      for (const deadline = Date.now() + 60_000; ; ) {
        const { count } = await client.workflow.count(`FhAgent = '${agent}'`);
        if (count >= total) break;
        if (Date.now() > deadline) throw new Error(`visibility indexed ${count} of ${total} sessions in 60 s`);
        await new Promise((r) => setTimeout(r, 250));
      }
      b = await board({ client });
      const api = [];
      let listed = 0;
      for (let r = 0; r < runs; r++) {
        const t = process.hrtime.bigint();
        const res = await fetch(`${b.origin}/api/sessions`, { headers: { 'x-fh-board-token': b.token } });
        listed = (await res.json()).sessions.length;
        api.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      const page = await browser.newPage();
      const drawn = [];
      for (let r = 0; r < runs; r++) {
        const t = process.hrtime.bigint();
        await page.goto(b.url);
        await page.waitForFunction((n) => document.querySelectorAll('.row').length >= n, listed, { timeout: 60_000 });
        drawn.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      return [
        { what: 'GET /api/sessions (visibility → JSON)', sessions: listed, 'median ms': median(api).toFixed(1), 'min ms': Math.min(...api).toFixed(1), 'max ms': Math.max(...api).toFixed(1) },
        { what: 'page: navigation → every row drawn (Chromium)', sessions: listed, 'median ms': median(drawn).toFixed(1), 'min ms': Math.min(...drawn).toFixed(1), 'max ms': Math.max(...drawn).toFixed(1) },
      ];
    } finally {
      await browser?.close();
      await b?.close();
      await eachLimited(started, CONCURRENCY, (id) => client.workflow.getHandle(id).terminate('bench done').catch(() => undefined));
      await server.stop();
    }
  },
};
