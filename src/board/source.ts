/**
 * What the board reads and changes, behind one small interface (`BoardSource`), so the HTTP server does
 * not care where sessions come from. `temporalBoardSource` is the real one: the inbox from visibility
 * (`listSessions`, no query or history per session), a session from its queries (info, messages,
 * context budget, compaction state, usage), its live channel from the session's events, and every
 * change through the session's updates (approve, interrupt, edit, settings, prompt).
 */
import { ATTACHMENT_LIMITS, ATTACHMENT_MEDIA_TYPES } from '../core/attachments';
import { mediaTypeOf, type PromptAttachment } from '../client/attachments';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { Entry } from '../core/entries';
import { FabricError, InvalidInputError } from '../core/errors';
import type { AgentEvent } from '../core/events';
import type { CompactionState } from '../core/conversation';
import { PERMISSION_MODES, THINKING_LEVELS } from '../core/sessions/settings';
import { connectionNameSchema } from '../core/connection-name';
import { PLAN_MODES } from '../core/sessions/plans';
import { auditTranscript } from '../audit/collect';
import type { TranscriptStore } from '../activities/stores/transcript-store';
import { listSessions, type SessionSummary } from '../client/sessions-list';
import { getSession } from '../client/sessions';
import type { LiveBrokerClient } from '../client/stream/broker-transport';
import type { AgentUsage } from '../wire/messages';
import type { SessionInfo } from '../wire/session-messages';
import { contextGauge, type ContextGauge } from './gauge';

/** One row of the inbox (what visibility knows, plus nothing fetched per session). */
export interface InboxRow {
  id: string;
  agent: string;
  title?: string;
  status: string;
  labels: Record<string, string | number | boolean>;
  flagged: boolean;
  archived: boolean;
  model?: string;
  lastMessageAt?: string;
  startTime: string;
  running: boolean;
  /** The tools whose calls wait for approval (a running session blocked on a person), in call order. */
  waitingApprovals?: string[];
}

export interface InboxFilter {
  status?: string;
  label?: string;
  archived?: boolean;
  limit?: number;
}

/** Everything the session page shows at once; the live channel then adds what happens next. */
export interface SessionView {
  info: SessionInfo;
  entries: Entry[];
  /** The decisions that shaped the conversation (compaction, masking, the overflow ladder), with their reasons. */
  decisions: AgentEvent[];
  gauge: ContextGauge | null;
  /** Where the live channel picks up: events after this one are new to the page. */
  offset?: string;
}

/**
 * One event of a session's live channel. `offset` is opaque to the page: it sends the last one back to
 * resume (SSE's Last-Event-ID) and gets only what came after it.
 */
export interface BoardEnvelope {
  offset: string;
  /** `subAgent`: the event is a sub-agent's (at any depth, `path` from the session down), not the session's own. */
  event: { type: string; data: Record<string, unknown>; at?: number; subAgent?: BoardSubAgent };
}

/** Which sub-agent an event comes from: agent names from the session down, and its workflow id. */
export interface BoardSubAgent {
  path: string[];
  workflowId: string;
}

const note = z.string().max(10_000, 'note is longer than 10,000 characters').optional();
/** Files dropped on the page or picked, as base64 (their limits are checked by the client's send, naming the field). */
const boardAttachments = z
  .array(z.object({ name: z.string().min(1).max(ATTACHMENT_LIMITS.nameChars), mediaType: z.string().max(100), data: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64') }).strict())
  .max(ATTACHMENT_LIMITS.perMessage)
  .optional();
/** Every change the page can ask for; one zod schema, so a bad field is refused naming it. */
export const boardActionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('approve'), callId: z.string().min(1), note }).strict(),
  z.object({ kind: z.literal('deny'), callId: z.string().min(1), note }).strict(),
  z.object({ kind: z.literal('approve-plan'), planId: z.string().min(1), mode: z.enum(PLAN_MODES).optional(), note }).strict(),
  z.object({ kind: z.literal('decline-plan'), planId: z.string().min(1), note }).strict(),
  z.object({ kind: z.literal('interrupt') }).strict(),
  z.object({ kind: z.literal('prompt'), text: z.string().min(1).max(1_000_000), attachments: boardAttachments }).strict(),
  z.object({ kind: z.literal('title'), title: z.string().min(1).max(500) }).strict(),
  z.object({ kind: z.literal('flag'), flagged: z.boolean() }).strict(),
  z.object({ kind: z.literal('archive'), archived: z.boolean() }).strict(),
  z.object({ kind: z.literal('status'), status: z.string().min(1).max(100) }).strict(),
  z.object({ kind: z.literal('read') }).strict(),
  z
    .object({
      kind: z.literal('settings'),
      permissionMode: z.enum(PERMISSION_MODES).optional(),
      thinking: z.enum(THINKING_LEVELS).optional(),
      model: z.string().min(1).max(200).optional(),
      // Refused by the session after its first message (CONNECTION_LOCKED), with the session's own message.
      connection: connectionNameSchema.optional(),
    })
    .strict(),
]);
export type BoardAction = z.infer<typeof boardActionSchema>;

export function parseBoardAction(body: unknown): BoardAction {
  const r = boardActionSchema.safeParse(body);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ path: i.path.join('.') || (i.code === 'unrecognized_keys' ? i.keys[0]! : ''), message: i.message }));
  throw new InvalidInputError('board action', issues[0]!.path, issues);
}

export interface AuditView {
  markdown: string;
  run: unknown;
}

export interface ReplayView {
  ok: boolean;
  verdict: string;
  events: number;
  detail?: unknown;
}

export interface BoardSource {
  readonly namespace: string;
  listSessions(filter: InboxFilter): Promise<InboxRow[]>;
  sessionView(id: string): Promise<SessionView>;
  /** The session's events after `from` (all of the current run's when absent), until `signal` aborts. */
  subscribe(id: string, from: string | undefined, signal: AbortSignal): AsyncIterable<BoardEnvelope>;
  act(id: string, action: BoardAction): Promise<unknown>;
  audit(id: string): Promise<AuditView>;
  replay(id: string): Promise<ReplayView>;
}

/** Replay needs the agents' code: without modules the board says how to get a verdict. */
export class ReplayUnavailableError extends FabricError {
  constructor() {
    super('REPLAY_UNAVAILABLE', 'replay needs the agents module(s): start the board with --agents <module> (board({ agents }))');
  }
}

export interface TemporalBoardSourceOptions {
  /** Agent modules for the replay check (the current code a history is replayed against). */
  agents?: string[];
  /** The workers' transcript store, to resolve offloaded payloads in audits and replays. */
  store?: TranscriptStore;
  /** How often the live channel asks a session for new events (ms; default 250). */
  pollMs?: number;
  /** Live replies from the workers' broker instead of Temporal while a call streams (see docs/streaming.md). */
  broker?: LiveBrokerClient;
}

const DECISIONS = new Set(['compaction', 'masking', 'overflow_step', 'context_edited', 'compaction_started', 'warning']);

export function temporalBoardSource(client: Client, options: TemporalBoardSourceOptions = {}): BoardSource {
  const pollMs = options.pollMs ?? 250;
  return {
    namespace: client.options.namespace,

    async listSessions(filter) {
      const rows = await listSessions(client, {
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.label ? { labels: [filter.label] } : {}),
        ...(filter.archived ? { archived: true } : {}),
        limit: filter.limit ?? 1000,
      });
      return rows.map(inboxRow);
    },

    async sessionView(id) {
      const s = getSession(client, id);
      const info = await s.info();
      const [entries, budget, compaction, usage, events] = await Promise.all([
        s.messages(),
        s.contextBudget().catch(() => null),
        s.compactionState().catch(() => null),
        s.usage().catch((): AgentUsage | null => null),
        s.events().catch((): AgentEvent[] => []),
      ]);
      return {
        info,
        entries,
        decisions: events.filter((e) => DECISIONS.has(e.type)),
        gauge: budget ? contextGauge({ budget, entries, compaction: compaction as CompactionState | null, usage }) : null,
        ...(lastOffset(events) ? { offset: lastOffset(events) } : {}),
      };
    },

    subscribe(id, from, signal) {
      const s = getSession(client, id) as unknown as Partial<Streaming>;
      // The session's stream (text as it is generated) where the SDK has it; else its events, polled.
      if (typeof s.stream === 'function') return streamEvents(s as Streaming, from, signal, options.broker);
      return pollEvents(client, id, from, signal, pollMs);
    },

    async act(id, action) {
      const s = getSession(client, id);
      switch (action.kind) {
        case 'approve':
          return s.approve(action.callId, action.note);
        case 'deny':
          return s.deny(action.callId, action.note);
        case 'approve-plan':
          return s.approvePlan(action.planId, { ...(action.mode ? { mode: action.mode } : {}), ...(action.note ? { note: action.note } : {}) });
        case 'decline-plan':
          return s.declinePlan(action.planId, action.note ? { note: action.note } : {});
        case 'interrupt':
          return s.interrupt();
        case 'prompt':
          return s.send(action.text, action.attachments?.length ? { attachments: action.attachments.map(boardFile) } : {});
        case 'title':
          return s.setTitle(action.title);
        case 'flag':
          return s.flag(action.flagged);
        case 'archive':
          return action.archived ? s.archive() : s.unarchive();
        case 'status':
          return s.setStatus(action.status);
        case 'read':
          return s.markRead();
        case 'settings': {
          const { kind: _kind, ...settings } = action;
          return s.updateSettings(settings);
        }
      }
    },

    async audit(id) {
      const history = await client.workflow.getHandle(id).fetchHistory();
      const audit = await auditTranscript(history, { ...(options.store ? { store: options.store } : {}), workflowId: id });
      return { markdown: audit.markdown, run: audit.json.run };
    },

    async replay(id) {
      if (!options.agents?.length) throw new ReplayUnavailableError();
      // Loaded only here: replaying bundles workflow code (the worker package); listing and watching do not.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { replayHistory } = require('../audit/replay') as typeof import('../audit/replay');
      const history = await client.workflow.getHandle(id).fetchHistory();
      const r = await replayHistory(history, { agents: options.agents, workflowId: id, ...(options.store ? { store: options.store } : {}) });
      if (r.ok) return { ok: true, events: r.events, verdict: `ok: the current code makes the same decisions over ${r.events} events` };
      return {
        ok: false,
        events: r.events,
        verdict: `${r.kind}${r.eventId !== undefined ? ` at event ${r.eventId}` : ''}: ${r.explanation}`,
        detail: { kind: r.kind, eventId: r.eventId, recorded: r.recorded, current: r.current },
      };
    },
  };
}

function inboxRow(s: SessionSummary): InboxRow {
  return {
    id: s.id,
    agent: s.agent,
    ...(s.title !== undefined ? { title: s.title } : {}),
    status: s.status,
    labels: s.labels as InboxRow['labels'],
    flagged: s.flagged,
    archived: s.archived,
    ...(s.model !== undefined ? { model: s.model } : {}),
    ...(s.lastMessageAt ? { lastMessageAt: s.lastMessageAt.toISOString() } : {}),
    startTime: s.startTime.toISOString(),
    running: s.running,
    ...(s.waitingApprovals ? { waitingApprovals: s.waitingApprovals.map((a) => a.tool) } : {}),
  };
}

/** The session handle's stream (src/wire/stream.ts): numeric offsets that only grow, across continue-as-new. */
interface Streaming {
  stream(options: { from?: number; signal?: AbortSignal; broker?: LiveBrokerClient }): AsyncIterable<{ offset: number; event: { type: string }; subAgent?: BoardSubAgent }>;
}

async function* streamEvents(s: Streaming, from: string | undefined, signal: AbortSignal, broker?: LiveBrokerClient): AsyncIterable<BoardEnvelope> {
  const last = from !== undefined && /^\d+$/.test(from) ? Number(from) : undefined;
  try {
    for await (const env of s.stream({ ...(last !== undefined ? { from: last + 1 } : {}), signal, ...(broker ? { broker } : {}) })) {
      // A sub-agent's events are marked as its (its text is not the session's reply): the page shows them
      // live in a box of their own, nested by depth.
      const event = { type: env.event.type, data: env.event as unknown as Record<string, unknown> };
      yield { offset: String(env.offset), event: env.subAgent ? { ...event, subAgent: { path: [...env.subAgent.path], workflowId: env.subAgent.workflowId } } : event };
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

/**
 * The live channel from the session's events query, polled. Events have no ids, so an offset is
 * `<at>:<n>`: the n-th event with that timestamp (several share one), which survives the rolling buffer.
 */
async function* pollEvents(client: Client, id: string, from: string | undefined, signal: AbortSignal, pollMs: number): AsyncIterable<BoardEnvelope> {
  const s = getSession(client, id);
  let last = parseOffset(from);
  while (!signal.aborted) {
    let events: AgentEvent[];
    try {
      events = await s.events();
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    let prevAt = -1;
    let n = 0;
    for (const e of events) {
      n = e.at === prevAt ? n + 1 : 0;
      prevAt = e.at;
      if (last && (e.at < last.at || (e.at === last.at && n <= last.n))) continue;
      last = { at: e.at, n };
      yield { offset: `${e.at}:${n}`, event: { type: e.type, data: e.data as unknown as Record<string, unknown>, at: e.at } };
    }
    await sleep(pollMs, signal);
  }
}

function lastOffset(events: AgentEvent[]): string | undefined {
  const last = events[events.length - 1];
  if (!last) return undefined;
  let n = 0;
  for (let i = events.length - 2; i >= 0 && events[i]!.at === last.at; i--) n++;
  return `${last.at}:${n}`;
}

function parseOffset(from: string | undefined): { at: number; n: number } | undefined {
  const m = from ? /^(\d+):(\d+)$/.exec(from) : null;
  return m ? { at: Number(m[1]), n: Number(m[2]) } : undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A file the page sent: its bytes, and its media type (the browser's, or the name's when the browser's is none we send: text/csv, '' …). */
function boardFile(a: { name: string; mediaType: string; data: string }): PromptAttachment {
  const known = (ATTACHMENT_MEDIA_TYPES as readonly string[]).includes(a.mediaType);
  return { name: a.name, mediaType: known ? a.mediaType : (mediaTypeOf(a.name) ?? a.mediaType), bytes: Buffer.from(a.data, 'base64') };
}
