/**
 * transcript-store: what the transcript store costs a model call, on the file store and on S3 (a real
 * MinIO on loopback, started by test/support/provision/minio.ts).
 *
 * (a) Cold transcript load (a worker that has not cached the transcript, e.g. after the run moved to
 *     another machine) at 10 / 100 / 1,000 prior model calls, each adding ~2 KB (a tool result and the
 *     assistant's tool call):
 *       walk    how releases up to 0.3 loaded: one store get per segment back to the root, on a chain
 *               written in that format (segments without load paths); kept here as `walkLoad`;
 *       paths   `Transcripts.load` now: the head segment, then its load path (checkpoints + the segments
 *               since the last one) fetched at once: two round trips.
 *     Median of several cold loads (a new Transcripts each time), store gets per load, and the store
 *     bytes of the chain: segments, and checkpoints (the write amplification of checkpointing).
 *
 * (b) The fhModel activity's store work per call, same conversation on both stores: the prelude get,
 *     loading the base transcript, resolving the tool result it refers to, and appending the call's
 *     segment (plus a checkpoint every 16th call). "warm": the worker that made the previous call
 *     (base cached); "cold": another worker each call (a cold load every call). Median and p90 of the
 *     calls 101-300 of a conversation.
 *
 *   FH_BENCH_COLD_CALLS=10,100,1000   the Ns of (a)
 *   MINIO_PATH=/path/to/minio         the MinIO binary (else PATH, .minio/bin, or built with Go)
 */
'use strict';
const { promises: fs } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { S3Client, CreateBucketCommand } = require('@aws-sdk/client-s3');
const { FileTranscriptStore, S3Store } = require('../dist/worker/index.js');
require('../test/support/swc-register.js');
const { startMinio } = require('../test/support/provision/minio.ts');
const { Transcripts, ToolResultStore, transcriptHead, segmentKey, loadJson, saveJson } = require('../dist/activities/stores/transcripts.js');
const { preludeKey } = require('../dist/activities/create-activities.js');
const { canonicalJson, hashString } = require('../dist/core/hash.js');

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function coldCalls() {
  const raw = process.env.FH_BENCH_COLD_CALLS ?? '10,100,1000';
  const ns = raw.split(',').map((s) => Number(s.trim()));
  if (ns.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`FH_BENCH_COLD_CALLS must be positive integers, got '${raw}'`);
  return ns.sort((a, b) => a - b);
}

/** Counts gets and bytes put by key kind. */
class Counting {
  constructor(inner) {
    this.inner = inner;
    this.gets = 0;
    this.puts = 0;
    this.putBytes = { transcripts: 0, checkpoints: 0, other: 0 };
  }
  get location() {
    return this.inner.location;
  }
  async get(key) {
    this.gets++;
    return this.inner.get(key);
  }
  async put(key, data) {
    this.puts++;
    const kind = key.split('/')[0];
    this.putBytes[kind in this.putBytes ? kind : 'other'] += data.length;
    return this.inner.put(key, data);
  }
  async touch(key) {
    return this.inner.touch?.(key);
  }
}

/** The load of releases up to 0.3: one get per segment, verified, back to the root. */
async function walkLoad(store, ref) {
  const parts = [];
  let cursor = ref;
  while (cursor) {
    const key = segmentKey(cursor.head);
    const blob = await store.get(key);
    if (!blob) return undefined;
    const segment = JSON.parse(decoder.decode(blob));
    const check = transcriptHead(segment.entries, segment.parent);
    if (check.head !== cursor.head || check.count !== cursor.count) throw new Error(`${key} failed its chain-hash check`);
    parts.push(segment.entries);
    cursor = segment.parent;
  }
  return [].concat(...parts.reverse());
}

/** Call i's entries: the tool result of the previous call (~2 KB) and the model's next tool call. */
function callEntries(i) {
  const content = `step ${i}: ${'lorem ipsum dolor sit amet '.repeat(75)}`.slice(0, 2000);
  return [
    { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content }] },
    { type: 'assistant', content: [{ type: 'text', text: `Step ${i} done; next.` }, { type: 'tool_use', id: `toolu_${i + 1}`, name: 'grow', input: { step: i + 1 } }] },
  ];
}

/** Every column in every row, so the table's columns come in this order. */
const row = (r) => ({ part: r.part, store: r.store, case: r.case, median: r.median, p90: r.p90, gets: r.gets, puts: r.puts, note: r.note });

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
const ms = (x) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const sameEntries = (a, b) => a && b && a.length === b.length && JSON.stringify(a) === JSON.stringify(b);

/** (a) on one store backend: old-format chain under `old`, current chain under `new`. */
async function coldLoads(ctx, label, makeStore, ns) {
  const rows = [];
  const old = makeStore('old');
  const current = new Counting(makeStore('new'));
  const writer = new Transcripts(current);
  const heads = new Map();
  const bytesAt = new Map();
  let parent = null;
  let entries = [];
  const last = ns.at(-1);
  const started = performance.now();
  for (let i = 0; i < last; i++) {
    const added = callEntries(i);
    const ref = transcriptHead(added, parent);
    await old.put(segmentKey(ref.head), encoder.encode(JSON.stringify({ parent, entries: added })));
    await writer.append(parent, entries, added);
    parent = ref;
    entries = entries.concat(added);
    if (ns.includes(i + 1)) {
      heads.set(i + 1, { ref, entries });
      bytesAt.set(i + 1, { ...current.putBytes, transcript: Buffer.byteLength(JSON.stringify(entries)) });
    }
  }
  ctx.log(`${label}: wrote ${last} calls twice (old format, current) in ${(performance.now() - started).toFixed(0)} ms`);

  for (const n of ns) {
    const { ref, entries: expected } = heads.get(n);
    const runs = n >= 1000 ? 7 : 15;
    const measure = async (load) => {
      const times = [];
      let gets = 0;
      for (let r = 0; r < runs + 1; r++) {
        const counting = new Counting(load.store);
        const t0 = performance.now();
        const got = await load.fn(counting, ref);
        const t = performance.now() - t0;
        if (!sameEntries(got, expected)) throw new Error(`${label} ${load.name} at ${n} calls loaded the wrong transcript`);
        if (r > 0) times.push(t); // the first run warms the page cache / connections
        gets = counting.gets;
      }
      return { t: median(times), gets };
    };
    const walk = await measure({ name: 'walk', store: old, fn: walkLoad });
    const paths = await measure({ name: 'paths', store: current.inner, fn: (s, r) => new Transcripts(s).load(r) });
    const b = bytesAt.get(n);
    const calls = `${n.toLocaleString('en-US')} calls`;
    rows.push(row({ part: 'cold load', store: label, case: `${calls}, walk (0.3)`, median: ms(walk.t), gets: walk.gets.toLocaleString('en-US') }));
    rows.push(row({ part: 'cold load', store: label, case: `${calls}, load paths`, median: ms(paths.t), gets: paths.gets.toLocaleString('en-US'), note: `${(walk.t / paths.t).toFixed(1)}x faster` }));
    if (label === 'file') {
      const stored = b.transcripts + b.checkpoints;
      rows.push(row({
        part: 'store bytes',
        store: 'either',
        case: calls,
        note: `transcript ${ctx.bytes(b.transcript, { mb: true })}; stored ${ctx.bytes(stored, { mb: true })} (${(stored / b.transcript).toFixed(2)}x): segments ${ctx.bytes(b.transcripts, { mb: true })}, checkpoints ${ctx.bytes(b.checkpoints, { mb: true })}`,
      }));
    }
  }
  return rows;
}

/** (b) the store work of fhModel per call, on one backend. */
async function modelCallWork(ctx, label, store, { calls = 300, measureFrom = 100 } = {}) {
  const counting = new Counting(store);
  const prelude = { system: 'You grow a document step by step.', tools: [{ name: 'grow', description: 'Adds a step.', input_schema: { type: 'object' } }] };
  const preludeHash = hashString(canonicalJson(prelude));
  await saveJson(counting, preludeKey(preludeHash), prelude);
  const warmWorker = new Transcripts(counting);
  const toolResults = new ToolResultStore(counting);
  const times = { warm: [], cold: [] };
  const gets = { warm: 0, cold: 0 };
  const puts = { warm: 0, cold: 0 };
  let base = null;
  let baseEntries = [];
  for (let i = 0; i < calls; i++) {
    const [toolResults0, assistant] = callEntries(i);
    // The tool activity stores its result; the model activity's delta refers to it.
    const contentRef = await toolResults.save(toolResults0.results[0].content);
    const delta = [{ type: 'tool_results', results: [{ ...toolResults0.results[0], content: '', contentRef }] }];
    const mode = i % 2 === 0 ? 'warm' : 'cold';
    const transcripts = mode === 'warm' ? warmWorker : new Transcripts(counting);
    const g0 = counting.gets;
    const p0 = counting.puts;
    const t0 = performance.now();
    // What fhModel does with the store, in its order.
    const stored = await loadJson(counting, preludeKey(preludeHash));
    if (hashString(canonicalJson(stored)) !== preludeHash) throw new Error('prelude changed');
    const loaded = base ? await transcripts.load(base) : [];
    if (!loaded || loaded.length !== baseEntries.length) throw new Error(`${label}: base transcript missing at call ${i}`);
    const resolved = await toolResults.resolve(delta);
    if (!resolved) throw new Error(`${label}: tool result missing at call ${i}`);
    const next = await transcripts.append(base, loaded, [...resolved, assistant]);
    const t = performance.now() - t0;
    if (i >= measureFrom) {
      times[mode].push(t);
      gets[mode] += counting.gets - g0;
      puts[mode] += counting.puts - p0;
    }
    // The warm worker made this call or sees the next: keep its cache as a real worker's would be.
    if (mode === 'cold') await warmWorker.load(next);
    base = next;
    baseEntries = loaded.concat(resolved, assistant);
  }
  return ['warm', 'cold'].map((mode) => row({
    part: 'fhModel store work / call',
    store: label,
    case: mode === 'warm' ? 'warm worker (made the previous call)' : 'cold worker (another worker each call)',
    median: ms(median(times[mode])),
    p90: ms(quantile(times[mode], 0.9)),
    gets: (gets[mode] / times[mode].length).toFixed(1),
    puts: (puts[mode] / times[mode].length).toFixed(2),
  }));
}

module.exports = {
  name: 'transcript-store',
  description: 'cold transcript load at 10/100/1,000 calls (walk vs load paths) and fhModel store work per call, file store vs S3 (MinIO)',
  walkLoad,
  async run(ctx) {
    const ns = coldCalls();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bench-store-'));
    ctx.log('starting MinIO');
    const minio = await startMinio({ onProgress: (line) => ctx.log(`[minio] ${line}`) });
    const credentials = { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey };
    const bucket = 'fh-bench';
    const raw = new S3Client({ endpoint: minio.endpoint, region: minio.region, forcePathStyle: true, credentials });
    const s3Stores = [];
    try {
      await raw.send(new CreateBucketCommand({ Bucket: bucket }));
      const file = (prefix) => new FileTranscriptStore(path.join(dir, prefix));
      const s3 = (prefix) => {
        const store = new S3Store({ bucket, prefix, endpoint: minio.endpoint, region: minio.region, credentials });
        s3Stores.push(store);
        return store;
      };
      const rows = [];
      rows.push(...(await coldLoads(ctx, 'file', file, ns)));
      rows.push(...(await coldLoads(ctx, 'S3 (MinIO)', s3, ns)));
      ctx.log('model-call store work');
      const perCall = [...(await modelCallWork(ctx, 'file', file('calls'))), ...(await modelCallWork(ctx, 'S3 (MinIO)', s3('calls')))];
      return [...rows, ...perCall];
    } finally {
      for (const s of s3Stores) s.client.destroy();
      raw.destroy();
      await minio.stop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
};
