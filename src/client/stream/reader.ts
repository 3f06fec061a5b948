/**
 * A run chain's stream, in offset order, from any offset: durable events from the stream query,
 * live events of a call from its activity's heartbeat details while the call runs. A call's block is
 * passed only once it closed (events after it wait), so offsets a client saw always grow and a reader
 * that reconnects with `from: last + 1` misses nothing and sees nothing twice. When a block closes,
 * what the reader had not seen of the reply is yielded from message_end (see CallAssembly).
 */
import type { StreamBlock, StreamEnvelope, StreamEvent, StreamEventOf, StreamPage } from '../../wire/stream';
import { CallAssemblies } from './assemblies';
import { sleep, type StreamSnapshot, type StreamTransport } from './transport';

export interface ReadStreamOptions {
  /** The first offset wanted (default 0: everything the run still keeps). */
  from?: number;
  signal?: AbortSignal;
  /** How often live deltas are looked for while a call streams (default 100 ms). */
  livePollMs?: number;
}

export function readStream(transport: StreamTransport, options: ReadStreamOptions = {}): AsyncGenerator<StreamEnvelope> {
  return readStreamKeeping(transport, options, new CallAssemblies());
}

/** readStream with the calls it assembles in `calls` (a test looks at how many it keeps). */
export async function* readStreamKeeping(transport: StreamTransport, options: ReadStreamOptions, calls: CallAssemblies): AsyncGenerator<StreamEnvelope> {
  const signal = options.signal;
  const livePollMs = options.livePollMs ?? 100;
  let pos = Math.max(0, options.from ?? 0);
  /** The run whose predecessors were read already. */
  let caughtUpBefore: string | undefined;
  while (!signal?.aborted) {
    const snap = await transport.snapshot(pos);
    // What is before this run's oldest event is in earlier runs (continue-as-new): read those first.
    if (pos < snap.page.oldest && snap.runId !== caughtUpBefore) {
      for await (const env of earlierRuns(transport, snap, pos, calls)) {
        if (signal?.aborted) return;
        pos = env.offset + 1;
        yield env;
      }
      caughtUpBefore = snap.runId;
      if (pos < snap.page.oldest) pos = snap.page.oldest;
      continue;
    }
    let progressed = false;
    let blocked: StreamBlock | undefined;
    let nested: StreamBlock | undefined;
    for (const item of walk(snap.page, snap, pos, calls)) {
      if ('openBlock' in item) {
        blocked = item.openBlock;
        break;
      }
      if ('subAgentBlock' in item) {
        nested = item.subAgentBlock;
        break;
      }
      if (signal?.aborted) return;
      pos = item.offset + 1;
      progressed = true;
      yield item;
    }
    if (nested) {
      // A sub-agent's stream, in place: read live from its child workflow, then on past its block.
      for await (const env of readSubAgent(transport, nested, pos, options)) {
        pos = env.offset + 1;
        yield env;
      }
      if (signal?.aborted) return;
      pos = Math.max(pos, nested.to);
      continue;
    }
    // Maybe more than one page. A reader that read a running run to its end waits on the history
    // instead: asking again at once found nothing new, and cost a describe and a stream query (30-60 ms
    // with five processes asking at once on 2 cores) just when a turn's call is about to open, so each
    // process learned of the call one round later (the watchers bench).
    if (progressed && !blocked && !(snap.running && pos >= snap.page.next)) continue;
    if (!snap.running && !snap.continued && pos >= snap.page.next) return; // the chain ended
    if (blocked) await (transport.waitForLive ? transport.waitForLive(snap.runId, signal) : sleep(awaitingFirstDelta(blocked, snap) ? Math.min(livePollMs, FIRST_DELTA_POLL_MS) : livePollMs, signal));
    else await transport.waitForChange(snap.runId, signal);
  }
}

/**
 * How often a reader looks for a model call's first live events, while it has none: the reply's first
 * delta is what a user waits for. The model's activity sends it 20 ms after the model did (see
 * LivePublisher); at the 100 ms poll it reached a reader 118-145 ms after the model's (the watchers
 * bench), most of it the wait for the next poll. Only until the first delta: then livePollMs again.
 */
export const FIRST_DELTA_POLL_MS = 25;

/** A model call's block whose activity published nothing yet (the model has not answered). */
function awaitingFirstDelta(block: StreamBlock, snap: StreamSnapshot): boolean {
  return block.kind === 'model' && !snap.live.has(block.callId);
}

/** How many runs back a reader looks for the offset it asked for. */
const MAX_EARLIER_RUNS = 20;

/** Events from `pos` in the runs before the snapshot's, oldest run first. */
async function* earlierRuns(
  transport: StreamTransport,
  snap: StreamSnapshot,
  from: number,
  calls: CallAssemblies,
): AsyncGenerator<StreamEnvelope> {
  const chain: string[] = [];
  let run = snap.runId;
  for (let i = 0; i < MAX_EARLIER_RUNS; i++) {
    const prev = await transport.previousRun(run);
    if (!prev) break;
    chain.unshift(prev);
    const page = await transport.readRun(prev, from);
    if (page.oldest <= from) break;
    run = prev;
  }
  let pos = from;
  for (const runId of chain) {
    for (;;) {
      const page = await transport.readRun(runId, pos);
      let moved = false;
      for (const item of walk(page, { ...snap, runId, running: false, page, live: new Map() }, pos, calls)) {
        if ('openBlock' in item) break; // a closed run has no open block
        if ('subAgentBlock' in item) {
          const block = item.subAgentBlock;
          for await (const env of readSubAgent(transport, block, pos, {})) {
            pos = env.offset + 1;
            yield env;
          }
          pos = Math.max(pos, block.to);
          moved = true;
          break; // the page's events after the block: read again from past it
        }
        pos = item.offset + 1;
        moved = true;
        yield item;
      }
      if (!moved || pos >= page.next) break;
    }
  }
}

/**
 * A sub-agent's events from `from` on, read from its child workflow's own stream (which runs at the
 * offsets of its block), each marked with where it comes from. Ends when the child's stream ended; a
 * child that never started (its block closed without it) has none.
 */
async function* readSubAgent(transport: StreamTransport, block: StreamBlock, from: number, options: ReadStreamOptions): AsyncGenerator<StreamEnvelope> {
  const child = block.workflowId ? transport.subAgent?.(block.workflowId) : undefined;
  if (!child) return;
  const signal = options.signal;
  // The block opens in the workflow task that starts the child: the child may not be there yet.
  while (!(await child.started())) {
    if (signal?.aborted) return;
    const page = (await transport.snapshot(block.from)).page;
    if (page.blocks.find((b) => b.callId === block.callId)?.closed !== false) return;
    await sleep(options.livePollMs ?? 100, signal);
  }
  const agent = block.agent ?? block.workflowId!;
  for await (const env of readStream(child.transport, { ...options, from: Math.max(from, block.from) })) {
    if (env.offset >= block.to) return;
    const subAgent = { path: [agent, ...(env.subAgent?.path ?? [])], workflowId: env.subAgent?.workflowId ?? block.workflowId! };
    yield { offset: env.offset, event: withBlock(env.event, block), subAgent };
  }
}

/**
 * The page's items from `pos` in offset order; stops at an open block (after its live events so far),
 * and at a sub-agent's block (the caller reads it from the child).
 */
function* walk(
  page: StreamPage,
  snap: StreamSnapshot,
  start: number,
  calls: CallAssemblies,
): Generator<StreamEnvelope | { openBlock: StreamBlock } | { subAgentBlock: StreamBlock }> {
  let pos = start;
  const blocks = page.blocks.filter((b) => b.to > pos).sort((a, b) => a.from - b.from);
  const events = page.events.filter((e) => e.offset >= pos);
  let bi = 0;
  let ei = 0;
  while (bi < blocks.length || ei < events.length) {
    const block = blocks[bi];
    const event = events[ei];
    if (event && (!block || event.offset < block.from)) {
      ei++;
      pos = event.offset + 1;
      yield event;
      continue;
    }
    bi++;
    const b = block!;
    if (b.kind === 'subagent') {
      yield { subAgentBlock: b };
      return;
    }
    for (const env of liveOf(b, snap, calls, pos)) {
      // What the consumer saw before `pos` (a reconnect) is assembled, not yielded again.
      const a = calls.of(b.callId);
      if (env.offset > a.lastOffset) {
        a.apply(env.event);
        a.lastOffset = env.offset;
      }
      if (env.offset < pos) continue;
      pos = env.offset + 1;
      yield env;
    }
    if (!b.closed) {
      yield { openBlock: b };
      return;
    }
    // Closed: what the reader missed of the reply, from its message_end (after the block).
    const end = events.find((e) => e.event.type === 'message_end' && e.event.callId === b.callId)?.event as StreamEventOf<'message_end'> | undefined;
    // A reader that joined inside a closed block cannot know what its consumer saw: message_end says it all.
    const followed = start <= b.from || calls.has(b.callId);
    if (end && b.kind === 'model' && followed) {
      const missing = calls.of(b.callId).catchUp(end);
      for (const event of missing) {
        if (pos >= b.to) break;
        yield { offset: pos++, event: withBlock(event, b) };
      }
    }
    calls.end(b.callId);
    pos = Math.max(pos, b.to);
  }
}

/**
 * The call's live events of its current attempt that the reader has still to assemble or to yield:
 * those after what its assembly holds, or from `pos` on. A reader wakes once per delta and the details
 * hold the whole attempt so far, so building every event again each time made following a call
 * quadratic in its deltas: with 500 readers of one process that was half the process's CPU (the
 * watchers bench), and the deltas reached them late.
 */
function* liveOf(block: StreamBlock, snap: StreamSnapshot, calls: CallAssemblies, pos: number): Generator<StreamEnvelope> {
  const details = snap.live.get(block.callId);
  if (!details || block.closed) return;
  const end = Math.min(details.from + details.events.length, block.to);
  if (end <= details.from) return; // nothing yet: the reader has not reached the call
  const start = Math.max(details.from, Math.min(pos, calls.of(block.callId).lastOffset + 1));
  for (let offset = start; offset < end; offset++) {
    const event = details.events[offset - details.from]!;
    yield { offset, event: withBlock({ ...event, callId: details.callId, attempt: details.attempt }, block) };
  }
}

function withBlock(event: StreamEvent, block: StreamBlock): StreamEvent {
  return event.messageId === undefined && block.messageId !== undefined ? { ...event, messageId: block.messageId } : event;
}
