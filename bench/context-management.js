'use strict';
/**
 * context-management: one scripted tool-heavy session (300 tool calls, seeded: reads of big files, test
 * and type-check runs with their output, edits, failing scripts, standing instructions sprinkled in
 * between tasks) driven through a real inline `Session` against the fake Anthropic server over HTTP,
 * once per configuration, side by side:
 *
 *   no management         compaction off, a 1M-token window (so it never overflows; if it did, the row says where)
 *   summaries only        compaction on (the SDK defaults), a 50k window
 *   masking + summaries   the same plus compaction.toolResults.maskAfterEntries (the compaction keep window)
 *   server-side           clear_tool_uses_20250919 applied by the fake server (see SERVER_SIDE below)
 *
 * each with prompt caching off and on. Tokens are what the fake server reported per conversation call
 * (uncached input + cache read + cache write); summariser calls are counted apart. Every request goes
 * through a small measuring proxy in this file, which reads the usage of each response.
 *
 * The survival columns (standing instructions / files touched / open errors / last test run still in
 * view at the end) come from the deterministic compaction-quality evaluation
 * (bench/context-eval) run over the same scripted session and window, for the matching strategy:
 * they score the SDK's deterministic fallback summary, not the fake's canned summary text.
 *
 *   FH_BENCH_CM_TOOL_CALLS=300          tool calls in the scripted session (e.g. 40 for a quick run)
 *   FH_BENCH_CM_UNMANAGED_CACHING=1     also run no management with caching on (~40 s more)
 */
const http = require('node:http');

const SEED = 1;
const TOOL_CALLS = 300;
/** The managed configurations' window: the evaluation's, so the survival figures are for the same window. */
const MANAGED_WINDOW = 50_000;
/** No management: big enough that the whole session fits (its last request is ~270k estimated tokens). */
const UNMANAGED_WINDOW = 1_000_000;
const SUMMARY =
  '## Goal\nWork through the user\'s coding tasks in this repository.\n## Progress\nSeveral modules changed; tests were run after each change.\n## Key Decisions\nNone recorded.\n## Failed Approaches\nNone recorded.\n## Open Issues\nSee the latest test run.\n## Next Steps\nContinue with the current task.';

/** The server-side rows use the SDK's own setting: Claude's context editing decides what is cleared. */
const SERVER_SIDE_VIA = "(compaction.strategy: 'server')";

/**
 * The configurations, in table order; `evalStrategy` names the evaluation strategy whose survival is
 * shown. To keep the run near two minutes, only the two client-side strategies run with caching off and
 * on (caching changes how the input is billed, hardly how much is sent): no management runs with caching
 * off (its requests reach ~460k tokens and the fake server's tokenizer makes each such run ~40 s of CPU;
 * FH_BENCH_CM_UNMANAGED_CACHING=1 adds caching on), the server-side ones with caching on.
 */
function configurations(deps, { unmanagedCaching = false } = {}) {
  const { evalSettings } = deps.evaluation;
  const managed = evalSettings({ contextWindowTokens: MANAGED_WINDOW });
  const serverSide = (compaction) => ({ compaction: { ...compaction, strategy: 'server' } });
  return [
    { name: 'no management', evalStrategy: 'none', window: UNMANAGED_WINDOW, compaction: { enabled: false }, caching: unmanagedCaching ? [false, true] : [false] },
    { name: 'summaries only', evalStrategy: 'summary-only', window: MANAGED_WINDOW, compaction: { enabled: true }, caching: [false, true] },
    {
      name: 'masking + summaries',
      evalStrategy: 'masking+summary',
      window: MANAGED_WINDOW,
      // The evaluation masks outside the compaction keep window; the same window here.
      compaction: { enabled: true, toolResults: { maskAfterEntries: managed.keepRecentEntries } },
      caching: [false, true],
    },
    // The evaluation's server-side strategy: the edit alone, no client compaction.
    { name: `server-side ${SERVER_SIDE_VIA}`, evalStrategy: 'server-side', window: MANAGED_WINDOW, ...serverSide({ enabled: true, recoverFromOverflow: false }), caching: [true] },
    // The same edit with the client's summaries only as the overflow fallback (threshold at the window).
    {
      name: `server-side + summary on overflow ${SERVER_SIDE_VIA}`,
      // The evaluation has no such strategy: no survival figures for it.
      evalStrategy: undefined,
      window: MANAGED_WINDOW,
      ...serverSide({ enabled: true, compactAtTokens: MANAGED_WINDOW, recoverFromOverflow: true }),
      caching: [true],
    },
  ];
}

function defaultDeps() {
  return {
    sdk: require('../dist/index.js'),
    testing: require('../dist/testing/index.js'),
    // The evaluation is TypeScript beside the bench (not shipped): loaded through the tests' swc hook.
    evaluation: (require('../test/support/swc-register.js'), require('./context-eval')),
  };
}

// ---------------------------------------------------------------------------------------------------
// The scripted session
// ---------------------------------------------------------------------------------------------------

const isToolCall = (e) => e.type === 'assistant' && e.content.some((b) => b.type === 'tool_use');

/**
 * The evaluation's generator sized to exactly `toolCalls` tool calls: it counts model calls (replies
 * included), so the smallest model-call count that gives that many tool calls, and whose every prompt
 * ends on a final reply (a real session's turn ends there), is taken. Deterministic for a seed.
 */
function scriptedSession(evaluation, { toolCalls = TOOL_CALLS, seed = SEED } = {}) {
  if (!Number.isInteger(toolCalls) || toolCalls < 1) throw new Error(`toolCalls must be a positive integer, got ${toolCalls}`);
  const start = Math.max(toolCalls, 20);
  for (let modelCalls = start; modelCalls <= start * 2; modelCalls++) {
    const session = evaluation.generateSession({ seed, modelCalls });
    if (session.entries.filter(isToolCall).length !== toolCalls) continue;
    const prompts = toPrompts(session.entries);
    if (prompts.every((p) => p.steps.length > 0 && p.steps[p.steps.length - 1].final)) return { session, prompts, toolCalls, modelCalls };
  }
  throw new Error(`no scripted session of seed ${seed} has exactly ${toolCalls} tool calls`);
}

/**
 * The session as prompts: consecutive user entries make one prompt (an instruction given between tasks
 * travels with the next task, so no model call is added), then the model calls that answer it.
 */
function toPrompts(entries) {
  const prompts = [];
  let current;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (e.type === 'user') {
      if (current && current.steps.length === 0) current.text += `\n\n${e.text}`;
      else prompts.push((current = { text: e.text, steps: [] }));
    } else if (e.type === 'assistant') {
      const call = e.content.find((b) => b.type === 'tool_use');
      const text = e.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
      if (!call) {
        current.steps.push({ final: true, text });
        continue;
      }
      const result = entries[i + 1].results[0];
      current.steps.push({ final: false, text, call: { id: call.id, name: call.name, input: call.input }, result: { content: result.content, isError: result.is_error === true } });
    }
  }
  return prompts;
}

// ---------------------------------------------------------------------------------------------------
// The measuring proxy
// ---------------------------------------------------------------------------------------------------

/**
 * Forwards every request to the fake server and reads each response's usage, telling conversation
 * calls from summariser calls.
 */
async function startProxy({ target, summarizeMarker }) {
  const upstream = new URL(target);
  const calls = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      const headers = { ...req.headers, host: upstream.host };
      let kind = 'other';
      if (req.method === 'POST' && req.url.startsWith('/v1/messages') && !req.url.startsWith('/v1/messages/count_tokens')) {
        const json = JSON.parse(body.toString('utf8'));
        const system = typeof json.system === 'string' ? json.system : JSON.stringify(json.system ?? '');
        kind = system.includes(summarizeMarker) ? 'summary' : 'conversation';
      }
      headers['content-length'] = String(body.length);
      const out = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (up) => {
        const back = [];
        up.on('data', (c) => back.push(c));
        up.on('end', () => {
          const payload = Buffer.concat(back);
          if (kind !== 'other') {
            const parsed = up.statusCode === 200 ? JSON.parse(payload.toString('utf8')) : undefined;
            calls.push({ kind, status: up.statusCode, usage: parsed?.usage, cleared: parsed?.context_management?.applied_edits?.length ?? 0, error: parsed ? undefined : payload.toString('utf8').slice(0, 300) });
          }
          res.writeHead(up.statusCode, up.headers);
          res.end(payload);
        });
      });
      out.on('error', (err) => {
        res.writeHead(502);
        res.end(String(err));
      });
      out.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------------------------------------------
// One configuration through a real Session
// ---------------------------------------------------------------------------------------------------

/** Tools that play the script's results in order, and fail loudly when the session drifts from it. */
function scriptedTools(sdk, queue) {
  const { tool, schema } = sdk;
  const play = (name) => async (input) => {
    const next = queue.shift();
    if (!next) throw new Error(`bench script exhausted at a ${name} call`);
    if (next.call.name !== name || JSON.stringify(next.call.input) !== JSON.stringify(input)) {
      throw new Error(`bench script drifted: expected ${next.call.name} ${JSON.stringify(next.call.input)}, got ${name} ${JSON.stringify(input)}`);
    }
    if (next.result.isError) throw new Error(next.result.content);
    return next.result.content;
  };
  const s = schema;
  return [
    tool({ name: 'read_file', description: 'Read a file of the repository.', input: s.object({ path: s.string() }), execute: play('read_file') }),
    tool({ name: 'write_file', description: 'Write a whole file.', input: s.object({ path: s.string(), content: s.string() }), execute: play('write_file') }),
    tool({ name: 'edit_file', description: 'Replace one exact string in a file.', input: s.object({ path: s.string(), old_string: s.string(), new_string: s.string() }), execute: play('edit_file') }),
    tool({ name: 'bash', description: 'Run a shell command in the repository.', input: s.object({ command: s.string() }), execute: play('bash') }),
  ];
}

/** Runs the scripted session under one configuration; returns what the fake server reported. */
async function runConfiguration(deps, script, config, promptCaching) {
  const { sdk, testing, evaluation } = deps;
  const { FakeAnthropicServer, say, reply } = testing;
  const fake = await FakeAnthropicServer.start({
    contextWindow: config.window,
    route: (req) => (JSON.stringify(req.body?.system ?? '').includes(SUMMARIZE_MARKER) ? say(SUMMARY) : undefined),
  });
  const proxy = await startProxy({ target: fake.url, summarizeMarker: SUMMARIZE_MARKER });
  const saved = { key: process.env.ANTHROPIC_API_KEY, url: process.env.ANTHROPIC_BASE_URL };
  process.env.ANTHROPIC_API_KEY = 'bench-key';
  process.env.ANTHROPIC_BASE_URL = proxy.url;
  let overflowAt;
  let failure;
  try {
    const toolQueue = [];
    for (const p of script.prompts) {
      for (const step of p.steps) {
        if (step.final) fake.enqueue(say(step.text));
        else {
          fake.enqueue(reply({ content: [...(step.text ? [step.text] : []), step.call] }));
          toolQueue.push(step);
        }
      }
    }
    const fh = await sdk.init({
      system: evaluation.EVAL_SYSTEM_PROMPT,
      tools: scriptedTools(sdk, toolQueue),
      contextWindowTokens: config.window,
      compaction: config.compaction,
      promptCaching,
      maxTurns: 500,
    });
    const session = await fh.session();
    for (const p of script.prompts) {
      try {
        await session.prompt(p.text);
      } catch (err) {
        const calls = proxy.calls.filter((c) => c.kind === 'conversation').length;
        if (err && err.code === 'CONTEXT_WINDOW_EXCEEDED') overflowAt = calls;
        else failure = err;
        break;
      }
    }
  } finally {
    process.env.ANTHROPIC_API_KEY = saved.key;
    process.env.ANTHROPIC_BASE_URL = saved.url;
    if (saved.key === undefined) delete process.env.ANTHROPIC_API_KEY;
    if (saved.url === undefined) delete process.env.ANTHROPIC_BASE_URL;
    await proxy.stop();
    await fake.stop();
  }
  if (failure) throw failure;
  return summarise(proxy.calls, overflowAt);
}

function summarise(calls, overflowAt) {
  const ok = calls.filter((c) => c.status === 200);
  const conversation = ok.filter((c) => c.kind === 'conversation');
  const summaries = ok.filter((c) => c.kind === 'summary');
  const sum = (xs, f) => xs.reduce((n, x) => n + f(x), 0);
  const input = (u) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
  return {
    modelCalls: conversation.length,
    rejected: calls.filter((c) => c.status !== 200).length,
    inputTokens: sum(conversation, (c) => input(c.usage)),
    cacheRead: sum(conversation, (c) => c.usage.cache_read_input_tokens ?? 0),
    cacheWrite: sum(conversation, (c) => c.usage.cache_creation_input_tokens ?? 0),
    peakTokens: Math.max(0, ...conversation.map((c) => input(c.usage))),
    editedCalls: conversation.filter((c) => c.cleared > 0).length,
    summarizerCalls: summaries.length,
    summarizerTokens: sum(summaries, (c) => input(c.usage) + c.usage.output_tokens),
    overflowAt,
  };
}

// Not exported from an entry: the summariser's system prompt starts with it (src/core/context/compaction/summary-prompt.ts).
const SUMMARIZE_MARKER = '[fabric-harness:summarize]';

// ---------------------------------------------------------------------------------------------------
// The bench
// ---------------------------------------------------------------------------------------------------

const k = (n) => `${(n / 1000).toLocaleString('en-US', { maximumFractionDigits: 0 })}k`;
const pct = (x) => (x.total === 0 ? '-' : `${Math.round((100 * x.kept) / x.total)}%`);

/** Every configuration over one scripted session; rows for the table. `options.toolCalls` sizes the session. */
async function measure(ctx, options = {}) {
  const deps = options.deps ?? defaultDeps();
  const script = scriptedSession(deps.evaluation, { toolCalls: options.toolCalls ?? TOOL_CALLS, seed: options.seed ?? SEED });
  ctx.log(`seed ${options.seed ?? SEED}: ${script.toolCalls} tool calls, ${script.modelCalls} model calls, ${script.prompts.length} prompts`);
  const evalReports = new Map(
    (await deps.evaluation.compareStrategies(script.session, { contextWindowTokens: MANAGED_WINDOW })).map((r) => [r.strategy, r]),
  );
  const rows = [];
  for (const config of configurations(deps, { unmanagedCaching: options.unmanagedCaching })) {
    const survival = config.evalStrategy === undefined ? undefined : evalReports.get(config.evalStrategy).survival;
    for (const caching of options.caching ?? config.caching) {
      const started = Date.now();
      const r = await runConfiguration(deps, script, config, caching);
      ctx.log(`${config.name}, caching ${caching ? 'on' : 'off'}: ${r.modelCalls} calls in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      rows.push({
        configuration: config.name,
        caching: caching ? 'on' : 'off',
        'model calls': r.modelCalls,
        'input sent': k(r.inputTokens),
        'cache read': k(r.cacheRead),
        'cache write': k(r.cacheWrite),
        'cache hit': r.inputTokens > 0 ? `${((100 * r.cacheRead) / r.inputTokens).toFixed(1)}%` : '-',
        'summariser calls': r.summarizerCalls,
        'summariser tokens': k(r.summarizerTokens),
        'peak context': k(r.peakTokens),
        overflowed: r.overflowAt === undefined ? 'no' : `at call ${r.overflowAt}`,
        'instructions (eval)': survival ? pct(survival.instructions) : '-',
        'files (eval)': survival ? pct(survival.files) : '-',
        'open errors (eval)': survival ? pct(survival.openErrors) : '-',
        'last evidence (eval)': survival ? (survival.lastEvidence ? 'yes' : 'no') : '-',
      });
      // The raw numbers, for callers (the unit test); not a table column.
      Object.defineProperty(rows[rows.length - 1], 'measured', { value: r, enumerable: false });
    }
  }
  return rows;
}

function toolCallsFromEnv() {
  const raw = process.env.FH_BENCH_CM_TOOL_CALLS;
  if (raw === undefined || raw === '') return TOOL_CALLS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`FH_BENCH_CM_TOOL_CALLS must be a positive integer, got '${raw}'`);
  return n;
}

module.exports = {
  name: 'context-management',
  description: 'tokens sent, cache hits, summariser cost and peak context of a real Session over 300 tool calls, per context strategy, caching off/on',
  run: (ctx) => measure(ctx, { toolCalls: toolCallsFromEnv(), unmanagedCaching: process.env.FH_BENCH_CM_UNMANAGED_CACHING === '1' }),
  measure,
  scriptedSession,
  toPrompts,
  configurations,
  TOOL_CALLS,
  SEED,
};
