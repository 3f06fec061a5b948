/**
 * sessions-list: how long `listSessions` takes over many sessions, on a dev server's visibility (SQLite).
 *
 * Starts N session-shaped workflows (default 1,000) of a type no worker serves, with the session search attributes
 * (statuses, labels, flags, archived, titles and last-message times spread over them), waits until visibility has
 * indexed all of them, then times `listSessions` for a few filters (median of several runs each) and terminates them.
 * No worker runs: listing reads visibility only, never a query or a history.
 *
 *   BENCH_SESSIONS=1000     how many sessions
 *   BENCH_SESSIONS_RUNS=5   timed runs per filter (the median is reported)
 */
'use strict';
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { listSessions } = require('../dist/client/index.js');
const { FH_SEARCH_ATTRIBUTES, labelKeywords, sessionSearchAttributes } = require('../dist/wire/search-attributes.js');

const STATUSES = ['todo', 'in-progress', 'needs-review', 'done', 'cancelled'];
const AREAS = ['billing', 'auth', 'search', 'infra'];
const CONCURRENCY = 32;

const { positiveInt } = require('./env-int.js');

/** Runs `fn` over `items`, at most `limit` at a time. */
async function eachLimited(items, limit, fn) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  });
  await Promise.all(lanes);
}

/** The i-th session: a deterministic spread of every attribute the filters below select on. */
function sessionFields(i, agent, now) {
  const labels = { area: AREAS[i % AREAS.length], priority: i % 3 };
  if (i % 10 === 0) labels.urgent = null;
  return {
    agent,
    status: STATUSES[i % STATUSES.length],
    title: `Session ${i} about ${AREAS[i % AREAS.length]}`,
    labels: labelKeywords(labels),
    flagged: i % 7 === 0,
    archived: i % 9 === 0,
    model: 'claude-bench',
    lastMessageAt: now - i * 1000,
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

module.exports = {
  name: 'sessions-list',
  description: 'listSessions over 1,000 sessions on a dev server (visibility only, no worker): all, by status, by label',
  async run(ctx) {
    const total = positiveInt('BENCH_SESSIONS', 1000);
    const runs = positiveInt('BENCH_SESSIONS_RUNS', 5);
    const server = await startDevServer({ searchAttributes: { ...FH_SEARCH_ATTRIBUTES }, onProgress: ctx.log });
    const client = server.env.client;
    const agent = `bench-agent-${Date.now().toString(36)}`;
    const ids = Array.from({ length: total }, (_, i) => `${agent}-${String(i).padStart(5, '0')}`);
    const started = [];
    try {
      const now = Date.now();
      let t0 = Date.now();
      await eachLimited(ids, CONCURRENCY, async (workflowId, i) => {
        await client.workflow.start('BenchSession', {
          taskQueue: 'bench-sessions-no-worker',
          workflowId,
          typedSearchAttributes: sessionSearchAttributes(sessionFields(i, agent, now)),
        });
        started.push(workflowId);
      });
      const startMs = Date.now() - t0;
      ctx.log(`started ${total} sessions in ${ctx.seconds(startMs)}`);

      t0 = Date.now();
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { count } = await client.workflow.count(`FhAgent = '${agent}'`);
        if (count >= total) break;
        if (Date.now() > deadline) throw new Error(`visibility indexed ${count} of ${total} sessions in 60 s`);
        await new Promise((r) => setTimeout(r, 250));
      }
      ctx.log(`visibility caught up ${ctx.seconds(Date.now() - t0)} after the last start`);

      const cases = [
        { filter: 'all (unarchived)', f: { agent } },
        { filter: 'all, archived too', f: { agent, includeArchived: true } },
        { filter: "status 'needs-review'", f: { agent, status: 'needs-review' } },
        { filter: "label 'urgent'", f: { agent, labels: ['urgent'] } },
        { filter: "label 'area=billing'", f: { agent, labels: ['area=billing'] } },
        { filter: 'newest 20', f: { agent, limit: 20 } },
      ];
      const rows = [];
      for (const c of cases) {
        const times = [];
        let found = 0;
        for (let r = 0; r < runs; r++) {
          const t = process.hrtime.bigint();
          found = (await listSessions(client, c.f)).length;
          times.push(Number(process.hrtime.bigint() - t) / 1e6);
        }
        rows.push({
          filter: c.filter,
          sessions: found,
          'median ms': median(times).toFixed(1),
          'min ms': Math.min(...times).toFixed(1),
          'max ms': Math.max(...times).toFixed(1),
        });
      }
      // Not a listing: the setup, one run, for scale.
      rows.push({ filter: `(setup: start ${total}, ${CONCURRENCY} at a time; one run)`, sessions: total, 'median ms': startMs.toFixed(0) });
      return rows;
    } finally {
      const t0 = Date.now();
      await eachLimited(started, CONCURRENCY, (id) =>
        client.workflow
          .getHandle(id)
          .terminate('bench done')
          .catch(() => undefined),
      );
      ctx.log(`terminated ${started.length} sessions in ${ctx.seconds(Date.now() - t0)}`);
      await server.stop();
    }
  },
};
