/**
 * The worker side of the side-by-side bench: each design's worker runs in a child process of its own so
 * that `process.cpuUsage()` of that process is the worker CPU of that design alone (the fake model server,
 * the clients that start the runs and the history measurement all stay in the parent).
 *
 * A child script calls `serveWorker(setup)`; `setup(config)` returns `{ worker, replay(workflowId) }`.
 * Messages (over the fork IPC channel, so no Temporal import here: the peer's child loads its own
 * Temporal release):
 *
 *   parent -> child  { type: 'cpu', id }              child -> { type: 'cpu', id, user, system } (µs)
 *   parent -> child  { type: 'replay', id, workflowId } child -> { type: 'replay', id, ms, cpuMs, events, error? }
 *                    (the worker is shut down before the first replay, so polling does not count)
 *   parent -> child  { type: 'mem', id }              child -> { type: 'mem', id, rss, heapUsed, external, arrayBuffers } (bytes, after a GC)
 *   parent -> child  { type: 'status', id }           child -> { type: 'status', id, numCachedWorkflows, maxCachedWorkflows }
 *   parent -> child  { type: 'exit' }
 *   child -> parent  { type: 'ready' } once the worker polls; { type: 'fatal', error } on a crash.
 */
'use strict';

function errorText(err) {
  return err && err.stack ? err.stack : String(err);
}

/** Runs the worker `setup` builds and answers the parent until told to exit. */
function serveWorker(setup) {
  const config = JSON.parse(process.env.FH_BENCH_CHILD_CONFIG || '{}');
  const send = (msg) => process.send && process.send(msg);
  let running;
  let worker;
  let replay;

  const stopWorker = async () => {
    if (!running) return;
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
    running = undefined;
  };

  process.on('message', (msg) => {
    if (msg.type === 'mem') {
      // After a full collection when the child runs with --expose-gc: what is still held, not garbage.
      if (typeof global.gc === 'function') global.gc();
      send({ type: 'mem', id: msg.id, ...process.memoryUsage() });
    } else if (msg.type === 'status') {
      // How many runs the worker holds in its workflow cache now, and the cache's size it runs with.
      send({ type: 'status', id: msg.id, numCachedWorkflows: worker.getStatus().numCachedWorkflows, maxCachedWorkflows: worker.options.maxCachedWorkflows });
    } else if (msg.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', id: msg.id, user, system, threads: threadCpuMs() });
    } else if (msg.type === 'replay') {
      (async () => {
        await stopWorker();
        const out = await replay(msg.workflowId);
        send({ type: 'replay', id: msg.id, ...out });
      })().catch((err) => send({ type: 'replay', id: msg.id, error: errorText(err) }));
    } else if (msg.type === 'exit') {
      stopWorker().finally(() => process.exit(0));
    }
  });

  (async () => {
    ({ worker, replay } = await setup(config));
    running = worker.run();
    running.catch((err) => send({ type: 'fatal', error: errorText(err) }));
    // A plugin's runWorker may start polling only after an await: until then the worker cannot be shut
    // down (a replay asked for at once would wait on a worker that never stops).
    while (worker.getState() === 'INITIALIZED') await new Promise((resolve) => setTimeout(resolve, 5));
    send({ type: 'ready' });
  })().catch((err) => {
    send({ type: 'fatal', error: errorText(err) });
    process.exit(1);
  });
}

/**
 * Times `Worker.runReplayHistory` (the Worker class of the child's own Temporal release) on the history
 * the given client fetches; the fetch is not timed.
 */
async function timeReplay({ Worker, client, workflowId, replayOptions }) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let error;
  try {
    await Worker.runReplayHistory(replayOptions, history, workflowId);
  } catch (err) {
    error = errorText(err);
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, events: (history.events || []).length, error };
}

/**
 * CPU time (ms) of this process's threads by kind, from /proc (Linux; {} elsewhere): `main` (the
 * activities, the core bridge's JavaScript side), `core` (Temporal core's Rust runtime threads:
 * gRPC, the workflow state machines), `other` (every other thread: the workflow thread, where
 * workflow code runs, and V8's garbage-collection and compiler helpers), and `other:<name>` for each
 * thread name within it (telling them apart from Node 22 on).
 */
function threadCpuMs() {
  const fs = require('node:fs');
  const out = { main: 0, core: 0, other: 0 };
  let tids;
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return {};
  }
  const tick = 1000 / 100; // USER_HZ
  for (const tid of tids) {
    let stat;
    try {
      stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * tick; // utime + stime
    const kind = tid === String(process.pid) ? 'main' : name.startsWith('tokio') ? 'core' : 'other';
    out[kind] += ms;
    // Node 22 and later name them (V8Worker: GC and compiler helpers; WorkerThread: workflow code;
    // libuv-worker: the thread pool); Node 20 calls every one 'node'.
    if (kind === 'other') out[`other:${name}`] = (out[`other:${name}`] || 0) + ms;
  }
  return out;
}

/** gRPC's default 4 MB receive limit is below a long history's page: raise it for the bench's clients. */
const BIG_MESSAGES = { 'grpc.max_receive_message_length': 512 * 1024 * 1024 };

module.exports = { serveWorker, timeReplay, BIG_MESSAGES };
