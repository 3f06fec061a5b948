/**
 * session-history: one session of many turns (default 2,000) through the real worker on a dev server,
 * with compaction on (bench/fixtures/session-agents.js: an 8,000-token window) and a history limit
 * (default 1,000 events) that makes the session continue as new many times. Each turn is one prompt
 * and one model call with a short scripted reply; every 10th turn the model first calls a tool whose
 * ~1 KB result goes into the transcript. Prompts go one after another, as fast as the session answers.
 *
 * Then every run of the session (visibility `WorkflowId = '<id>'`) is fetched by runId and measured:
 *
 *   run bytes    `temporal.api.history.v1.History.encode(history).finish().length` of each run's history
 *   turn bytes   each event's `HistoryEvent.encode(event).finish().length`, attributed to the turn whose
 *                prompt update (fh.session.prompt) was accepted last before it; events of a run before its
 *                first accepted prompt (the run's start, the transcript load) go to that run's first turn.
 *                So a turn's bytes include its share of the continue-as-new overhead.
 *   largest      the largest single event (encoded) and the largest single payload (encoded `Payload`)
 *
 * The claim it checks: history per turn is flat (the last 100 turns cost what the first 100 did) and
 * every run stays bounded, however long the conversation. When the last/first ratio is over 1.25 the
 * per-event-type breakdown of both windows is added to the rows, so what grows is visible.
 *
 *   FH_BENCH_SESSION_TURNS=2000          turns (e.g. 200 for a quick run)
 *   FH_BENCH_SESSION_HISTORY_LIMIT=1000  the session's historyLimit (events)
 */
'use strict';
const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const { temporal } = require('@temporalio/proto');
const { DefaultLogger, NativeConnection, Runtime } = require('@temporalio/worker');
const { startDevServer } = require('../dist/testing/temporal-cli.js');
const { FakeAnthropicServer, callTools, say } = require('../dist/testing/anthropic/fake-anthropic.js');
const { createWorker, bundleAgents, FileTranscriptStore, FabricHarnessPlugin } = require('../dist/worker/index.js');
const { startSession } = require('../dist/client/index.js');
const { FH_SEARCH_ATTRIBUTES } = require('../dist/wire/search-attributes.js');
const { DEFAULT_MODEL } = require('../dist/core/models.js');
const { benchSession, noteTool } = require('./fixtures/session-agents.js');

const AGENTS = require.resolve('./fixtures/session-agents.js');
const API_KEY = 'bench-key';
const PROGRESS_EVERY = 200;
const TOOL_EVERY = 10;
const WINDOW = 100;
const FLAT_RATIO = 1.25;
const SUMMARY_MARKER = '[fabric-harness:summarize]';
const SUMMARY =
  '## Goal\nAnswer short messages.\n## Progress\nAnswered every message so far.\n## Key Decisions\nNone.\n## Failed Approaches\nNone.\n## Open Issues\nNone.\n## Next Steps\nKeep answering.';
const PROMPT_UPDATE = 'fh.session.prompt';

const { positiveInt } = require('./env-int.js');

const promptText = (turn) => `turn ${turn}: answer in a few words.`;
const replyText = (turn) => `Answer to turn ${turn}.`;
const TURN_RE = /turn (\d+): answer/;

const lastOf = (xs) => xs[xs.length - 1];
const blocks = (m) => (Array.isArray(m.content) ? m.content : [{ type: 'text', text: String(m.content) }]);

/**
 * The fake's answers: the summariser gets a fixed summary, the title model a title; a conversation
 * request whose last message carries a tool result gets the turn's reply; otherwise the turn number in
 * the last user text decides: every 10th turn calls read_note first, the others reply at once.
 */
function sessionRoute(req) {
  if (req.path !== '/v1/messages') return undefined;
  const system = typeof req.body.system === 'string' ? req.body.system : JSON.stringify(req.body.system ?? '');
  if (system.startsWith(SUMMARY_MARKER)) return say(SUMMARY);
  if (/title/i.test(system)) return say('Bench Session History');
  const messages = req.body.messages ?? [];
  const userTexts = messages
    .filter((m) => m.role === 'user')
    .flatMap((m) => blocks(m).filter((b) => b.type === 'text').map((b) => b.text));
  const turnMatch = [...userTexts].reverse().map((t) => TURN_RE.exec(t)).find(Boolean);
  if (!turnMatch) return undefined; // the queue is empty: the fake answers 400, and the bench fails loudly
  const turn = Number(turnMatch[1]);
  const last = lastOf(messages);
  if (last && last.role === 'user' && blocks(last).some((b) => b.type === 'tool_result')) return say(replyText(turn));
  return turn % TOOL_EVERY === 0 ? callTools({ name: 'read_note', input: { n: turn } }) : say(replyText(turn));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const eventTypeName = (e) => String(temporal.api.enums.v1.EventType[e.eventType] ?? e.eventType).replace(/^EVENT_TYPE_/, '');
const eventBytes = (e) => temporal.api.history.v1.HistoryEvent.encode(e).finish().length;

/** Every Payload inside an event (any object with Uint8Array `data`), with its encoded size. */
function payloadsOf(obj, out = []) {
  if (!obj || typeof obj !== 'object') return out;
  if (obj instanceof Uint8Array) return out;
  if (obj.data instanceof Uint8Array && ('metadata' in obj || Object.keys(obj).length <= 2)) {
    out.push(temporal.api.common.v1.Payload.encode(obj).finish().length);
    return out;
  }
  for (const v of Array.isArray(obj) ? obj : Object.values(obj)) payloadsOf(v, out);
  return out;
}

/** The turn an accepted prompt update belongs to, from the prompt text in its (inline JSON) payload. */
function promptTurn(event) {
  const a = event.workflowExecutionUpdateAcceptedEventAttributes;
  const input = a && a.acceptedRequest && a.acceptedRequest.input;
  if (!input || input.name !== PROMPT_UPDATE) return undefined;
  const payload = input.args && input.args.payloads && input.args.payloads[0];
  const m = payload && TURN_RE.exec(Buffer.from(payload.data ?? []).toString('utf8'));
  return m ? Number(m[1]) : null; // null: a prompt whose text we cannot read (e.g. stored externally)
}

/** A label for the event-type breakdown: activity events carry their activity's name. */
function eventLabel(e, activityBySchedule) {
  const type = eventTypeName(e);
  const sched = e.activityTaskScheduledEventAttributes;
  if (sched) {
    activityBySchedule.set(String(e.eventId), sched.activityType.name);
    return `${type} ${sched.activityType.name}`;
  }
  for (const key of ['activityTaskStartedEventAttributes', 'activityTaskCompletedEventAttributes', 'activityTaskFailedEventAttributes']) {
    const a = e[key];
    if (a) return `${type} ${activityBySchedule.get(String(a.scheduledEventId)) ?? '?'}`;
  }
  return type;
}

/**
 * Measures every run of session `id` (oldest first): per run bytes/events/turns, per turn bytes and
 * per-turn-per-label bytes, the largest event and payload.
 */
async function measureSession(client, id, expectedRuns, ctx) {
  let runs = [];
  const deadline = Date.now() + 60_000;
  for (;;) {
    runs = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(wf);
    if (runs.length >= expectedRuns) break;
    if (Date.now() > deadline) throw new Error(`visibility lists ${runs.length} runs of ${id}, the session says ${expectedRuns}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());

  const turnBytes = new Map(); // turn -> bytes
  const turnLabels = new Map(); // turn -> Map(label -> bytes)
  const perRun = [];
  let largestEvent = { bytes: 0, type: '' };
  let largestPayload = { bytes: 0, type: '' };
  let unreadablePrompts = 0;
  for (const run of runs) {
    const history = await client.workflow.getHandle(id, run.runId).fetchHistory();
    const events = history.events ?? [];
    const activityBySchedule = new Map();
    const pending = []; // [bytes, label] before the run's first accepted prompt
    let current;
    let turnsInRun = 0;
    let runLargest = { bytes: 0, type: '' };
    const add = (turn, bytes, label) => {
      turnBytes.set(turn, (turnBytes.get(turn) ?? 0) + bytes);
      const labels = turnLabels.get(turn) ?? new Map();
      labels.set(label, (labels.get(label) ?? 0) + bytes);
      turnLabels.set(turn, labels);
    };
    for (const e of events) {
      const bytes = eventBytes(e);
      const label = eventLabel(e, activityBySchedule);
      if (bytes > largestEvent.bytes) largestEvent = { bytes, type: label };
      if (bytes > runLargest.bytes) runLargest = { bytes, type: label };
      for (const p of payloadsOf(e)) if (p > largestPayload.bytes) largestPayload = { bytes: p, type: label };
      const turn = promptTurn(e);
      if (turn === null) unreadablePrompts++;
      if (typeof turn === 'number') {
        current = turn;
        turnsInRun++;
        for (const [b, l] of pending.splice(0)) add(current, b, l);
      }
      if (current === undefined) pending.push([bytes, label]);
      else add(current, bytes, label);
    }
    // A run without an accepted prompt (possible only at the very end): its bytes go to the last turn.
    if (pending.length && turnBytes.size) for (const [b, l] of pending.splice(0)) add(Math.max(...turnBytes.keys()), b, l);
    perRun.push({
      runId: run.runId,
      status: run.status.name,
      bytes: temporal.api.history.v1.History.encode(history).finish().length,
      events: events.length,
      turns: turnsInRun,
      largest: runLargest,
    });
  }
  if (unreadablePrompts) ctx.log(`${unreadablePrompts} prompt updates had a payload the bench could not read`);
  return { perRun, turnBytes, turnLabels, largestEvent, largestPayload };
}

/** Bytes per turn over turns [from, to], total and by event label. */
function windowOf(m, from, to) {
  let total = 0;
  const labels = new Map();
  for (let t = from; t <= to; t++) {
    total += m.turnBytes.get(t) ?? 0;
    for (const [l, b] of m.turnLabels.get(t) ?? []) labels.set(l, (labels.get(l) ?? 0) + b);
  }
  const n = to - from + 1;
  return { perTurn: total / n, labels: new Map([...labels].map(([l, b]) => [l, b / n])) };
}

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m) => console.error(m) };
}

module.exports = {
  name: 'session-history',
  sessionRoute,
  description: 'one session of 2,000 turns (compaction on, historyLimit 1,000): runs, history bytes per run and per turn (first vs last 100), largest event',

  async run(ctx) {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // already installed (another bench in this process)
    }
    const turns = positiveInt('FH_BENCH_SESSION_TURNS', 2000, 2 * WINDOW);
    const historyLimit = positiveInt('FH_BENCH_SESSION_HISTORY_LIMIT', 1000, 20);
    const cleanups = [];
    try {
      const server = await startDevServer({
        namespace: 'default',
        logLevel: 'error',
        searchAttributes: { ...FH_SEARCH_ATTRIBUTES },
        onProgress: (l) => ctx.log(l),
      });
      cleanups.push(() => server.stop());
      const fake = await FakeAnthropicServer.start({ route: sessionRoute, apiKey: API_KEY });
      cleanups.push(() => fake.stop());
      const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-session-store-'));
      cleanups.push(() => fs.rm(storeDir, { recursive: true, force: true }));
      const store = new FileTranscriptStore(storeDir);
      const nativeConnection = await NativeConnection.connect({ address: server.address });
      cleanups.push(() => nativeConnection.close());
      const connection = await Connection.connect({ address: server.address });
      cleanups.push(() => connection.close());
      const namespace = server.namespace;

      let t = Date.now();
      const bundle = await bundleAgents(AGENTS, { logger: quietLogger() });
      ctx.log(`bundled the session agent in ${ctx.seconds(Date.now() - t)}`);
      const taskQueue = `bench-session-${process.pid}`;
      const worker = await createWorker({
        agents: AGENTS,
        tools: [noteTool],
        connection: nativeConnection,
        namespace,
        taskQueue,
        model: { apiKey: API_KEY, baseURL: fake.url, defaultModel: DEFAULT_MODEL },
        store,
        workflowBundle: bundle,
      });
      const client = new Client({ connection, namespace, plugins: [new FabricHarnessPlugin({ store })] });
      const id = `bench-session-${Date.now().toString(36)}`;

      let driveMs = 0;
      let info;
      await worker.runUntil(async () => {
        const session = await startSession(client, benchSession, { id, taskQueue, historyLimit });
        const started = Date.now();
        for (let turn = 1; turn <= turns; turn++) {
          const reply = await session.prompt(promptText(turn));
          if (reply !== replyText(turn)) throw new Error(`turn ${turn}: the session replied '${reply}', expected '${replyText(turn)}'`);
          if (turn % PROGRESS_EVERY === 0 || turn === turns) {
            const i = await session.info();
            ctx.log(`${turn}/${turns} turns in ${ctx.seconds(Date.now() - started)}; ${i.continuedRuns} continue-as-new so far`);
          }
        }
        driveMs = Date.now() - started;
        info = await session.info();
        await session.end();
        await session.workflow.result();
      });
      const summaries = fake.messageRequests().filter((r) => typeof r.body.system === 'string' && r.body.system.startsWith(SUMMARY_MARKER)).length;
      ctx.log(`${turns} turns in ${ctx.seconds(driveMs)} (${(driveMs / turns).toFixed(0)} ms/turn); ${summaries} compactions; measuring ${info.continuedRuns + 1} runs`);

      t = Date.now();
      const m = await measureSession(client, id, info.continuedRuns + 1, ctx);
      ctx.log(`measured in ${ctx.seconds(Date.now() - t)}`);
      const missing = [];
      for (let turn = 1; turn <= turns; turn++) if (!m.turnBytes.has(turn)) missing.push(turn);
      if (missing.length) throw new Error(`no accepted prompt found in any run for turns ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''}`);

      // Runs that continued as new are full runs; the last one ends where the bench stopped.
      const full = m.perRun.filter((r) => r.status === 'CONTINUED_AS_NEW');
      const last = lastOf(m.perRun);
      const runBytes = (full.length ? full : m.perRun).map((r) => r.bytes);
      const first = windowOf(m, 1, WINDOW);
      const final = windowOf(m, turns - WINDOW + 1, turns);
      const ratio = final.perTurn / first.perTurn;
      for (const r of m.perRun) ctx.log(`run ${r.runId.slice(0, 8)} ${r.status}: ${r.turns} turns, ${r.events} events, ${ctx.bytes(r.bytes)}; largest event ${ctx.bytes(r.largest.bytes)} (${r.largest.type})`);

      const rows = [
        { measure: 'turns', value: turns.toLocaleString('en-US') },
        { measure: `runs (continue-as-new: ${m.perRun.length - 1}; historyLimit ${historyLimit} events)`, value: String(m.perRun.length) },
        { measure: 'turns per full run (min / median / max)', value: statsOf(full.map((r) => r.turns), (x) => String(x)) },
        { measure: 'events per full run (min / median / max)', value: statsOf(full.map((r) => r.events), (x) => String(x)) },
        { measure: 'history bytes per full run (min / median / max)', value: statsOf(runBytes, (x) => ctx.bytes(x)) },
        { measure: `history bytes of the last run (${last.turns} turns, ended by the bench)`, value: ctx.bytes(last.bytes) },
        { measure: 'history bytes, all runs', value: ctx.bytes(m.perRun.reduce((n, r) => n + r.bytes, 0)) },
        { measure: `history bytes per turn, turns 1-${WINDOW}`, value: ctx.bytes(first.perTurn) },
        { measure: `history bytes per turn, turns ${turns - WINDOW + 1}-${turns}`, value: ctx.bytes(final.perTurn) },
        { measure: 'last / first', value: `${ratio.toFixed(2)}x` },
        { measure: `largest event (${m.largestEvent.type})`, value: ctx.bytes(m.largestEvent.bytes) },
        { measure: `largest payload (in ${m.largestPayload.type})`, value: ctx.bytes(m.largestPayload.bytes) },
        { measure: `compactions (summary calls)`, value: String(summaries) },
        { measure: 'wall time of the turns', value: ctx.seconds(driveMs) },
        { measure: 'per turn', value: `${(driveMs / turns).toFixed(0)} ms` },
      ];
      const breakdown = compareLabels(first.labels, final.labels);
      for (const b of breakdown) ctx.log(`  ${b.label}: ${b.first.toFixed(0)} -> ${b.final.toFixed(0)} B/turn`);
      if (ratio > FLAT_RATIO) {
        rows.push({ measure: `NOT FLAT: bytes per turn by event, turns 1-${WINDOW} -> last ${WINDOW}`, value: '' });
        for (const b of breakdown.filter((x) => Math.abs(x.final - x.first) >= 1)) {
          rows.push({ measure: `  ${b.label}`, value: `${b.first.toFixed(0)} -> ${b.final.toFixed(0)} B` });
        }
      }
      return rows;
    } finally {
      for (const cleanup of cleanups.reverse()) {
        await Promise.resolve()
          .then(cleanup)
          .catch((err) => ctx.log(`cleanup: ${err && err.message ? err.message : err}`));
      }
    }
  },
};

function statsOf(xs, fmt) {
  if (xs.length === 0) return '(no full run)';
  return `${fmt(Math.min(...xs))} / ${fmt(median(xs))} / ${fmt(Math.max(...xs))}`;
}

/** Labels of both windows, biggest change first. */
function compareLabels(a, b) {
  const labels = new Set([...a.keys(), ...b.keys()]);
  return [...labels]
    .map((label) => ({ label, first: a.get(label) ?? 0, final: b.get(label) ?? 0 }))
    .sort((x, y) => Math.abs(y.final - y.first) - Math.abs(x.final - x.first) || y.final - x.final);
}
