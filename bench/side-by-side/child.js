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
const fs = require('node:fs');

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
    noteThreads('v8');
    await fs.promises.stat(__filename); // starts libuv's pool, if nothing has yet
    noteThreads('libuv');
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
 * CPU time (ms) of this process's threads by kind, from /proc (Linux; {} elsewhere):
 * - `main`: the activities, the core bridge's JavaScript side;
 * - `core`: Temporal core's Rust threads (its tokio runtime: gRPC, the workflow state machines; and its
 *   `workflow-processing` and other named threads);
 * - `workflow`: the worker threads Temporal runs workflow code in;
 * - `v8`: V8's helper threads (the optimizing compiler's background jobs, concurrent marking, parallel
 *   scavenges), which a CPU profile of any JavaScript thread does not show;
 * - `libuv`: libuv's thread pool (asynchronous file system calls, DNS).
 * Node 22 and later name the threads (`WorkerThread`, `V8Worker`, `libuv-worker`); Node 20 calls every
 * one `node`, so there a thread's kind is told by when it started (see threadsAtStart).
 */
function threadCpuMs() {
  const out = { main: 0, core: 0, workflow: 0, v8: 0, libuv: 0 };
  const tick = 1000 / 100; // USER_HZ
  for (const { tid, name, stat } of readThreads()) {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out[threadKind(tid, name)] += (Number(fields[11]) + Number(fields[12])) * tick; // utime + stime
  }
  return out;
}

/** This process's threads: id, name (`comm`, 15 characters at most) and `stat` line; [] off Linux. */
function readThreads() {
  let tids;
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return [];
  }
  const threads = [];
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      threads.push({ tid, name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), stat });
    } catch {
      // the thread ended
    }
  }
  return threads;
}

/**
 * The unnamed threads present before the worker was set up (Node 20): V8's platform threads start with
 * the process, libuv's pool with the first asynchronous call (serveWorker makes one before setup), and
 * the workflow threads only when Temporal's worker starts.
 */
const threadsAtStart = { v8: new Set(), libuv: new Set() };

function noteThreads(kind) {
  for (const { tid } of readThreads()) if (tid !== String(process.pid) && !threadsAtStart.v8.has(tid)) threadsAtStart[kind].add(tid);
}

function threadKind(tid, name) {
  if (tid === String(process.pid)) return 'main';
  if (name.startsWith('tokio') || name.startsWith('workflow-proces') || name.startsWith('temporal')) return 'core';
  if (name === 'WorkerThread') return 'workflow';
  if (name === 'V8Worker' || name === 'DelayedTaskSche' || name === 'SignalInspector') return 'v8';
  if (name === 'libuv-worker') return 'libuv';
  if (threadsAtStart.v8.has(tid)) return 'v8';
  if (threadsAtStart.libuv.has(tid)) return 'libuv';
  return 'workflow';
}

/** gRPC's default 4 MB receive limit is below a long history's page: raise it for the bench's clients. */
const BIG_MESSAGES = { 'grpc.max_receive_message_length': 512 * 1024 * 1024 };

module.exports = { serveWorker, timeReplay, BIG_MESSAGES };
