import { allHandlersFinished, condition, currentUpdateInfo, setHandler } from '@temporalio/workflow';
import { z } from 'zod';
import { utf8Length } from '../core/bytes';
import { NotServingError, PromptTooLargeError, UnknownSessionError } from '../core/errors';
import { addCost } from '../core/costs';
import type { AgentEvent } from '../core/events';
import type { Harness, PromptHost, ServeOptions } from '../core/harness';
import { publishAgentEvent } from './stream/publish';
import { streamTurn } from './stream/turns';
import type { Conversation } from '../core/conversation';
import { parseWith } from '../core/validate';
import { promptTextSchema } from '../core/conversation';
import { encodeFailure, rejectWith } from '../wire/failures';
import { RunApprovals } from './run-approvals';
import {
  closeSignal,
  compactionStateQuery,
  compactUpdate,
  contextBudgetQuery,
  eventsQuery,
  MAX_PROMPT_BYTES,
  messagesQuery,
  phaseQuery,
  promptUpdate,
  conversationsQuery,
  usageQuery,
  type AgentUsage,
  type CompactRequest,
  type PromptRequest,
} from '../wire/messages';
import { lazySchema } from '../core/lazy-schema';

/** Events kept for the events query; older ones drop off (they are all in history anyway). */
const EVENT_BUFFER = 500;
const DEFAULT_IDLE_TIMEOUT_MS = 10 * 60_000;
/**
 * How long a prompt or compaction may wait for a session the run has not created yet (a client that
 * starts a run and prompts at once races the run's own set-up). Past it: UNKNOWN_SESSION.
 */
const SESSION_GRACE_MS = 10_000;

const promptRequestSchema = lazySchema(() => z
  .object({ text: promptTextSchema, sessionId: z.string().min(1).optional() })
  .strict());
const compactRequestSchema = lazySchema(() => z
  .object({
    keepRecentEntries: z.number().int().min(1).optional(),
    generateSummary: z.boolean().optional(),
    sessionId: z.string().min(1).optional(),
  })
  .strict());

type Phase = 'starting' | 'serving' | 'served' | 'returned';

/**
 * A run's state as clients see it, and the handlers they reach it through. Prompts are answered only
 * by `harness.serve()`; a prompt that arrives before the run serves waits for it, and is failed with
 * NOT_SERVING (never dropped) if the run returns without serving. The workflow returns only once every
 * accepted update has finished.
 */
export class RunState implements PromptHost {
  readonly harnesses: Harness[] = [];
  private readonly events: AgentEvent[] = [];
  private phase: Phase = 'starting';
  /** Calls of tools that need approval, waiting for a client (plain runs; sessions have their own). */
  readonly approvals = new RunApprovals((e) => this.record(e));
  private idleTimeoutMs: number | undefined;
  private closed = false;
  /** serve() ran at least once. */
  private served = false;
  private promptsReceived = 0;
  private promptsInFlight = 0;

  async serve(options: ServeOptions): Promise<number> {
    if (this.phase === 'returned') return 0;
    this.phase = 'serving';
    const start = this.promptsReceived;
    const idle = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.idleTimeoutMs = idle;
    while (!this.closed) {
      const seen = this.promptsReceived;
      const woke = await condition(() => this.closed || this.promptsReceived !== seen, idle);
      if (!woke && this.promptsInFlight === 0) break;
    }
    // Prompts already accepted are in history: answer them before serving ends.
    await condition(() => this.promptsInFlight === 0);
    this.phase = 'served';
    this.served = true;
    return this.promptsReceived - start;
  }

  /** The run's `run` returned (or threw): fail what still waits for serving, then let handlers finish. */
  async finish(): Promise<void> {
    this.phase = 'returned';
    await condition(allHandlersFinished);
  }

  /** The events kept (the last ones). */
  recorded(): readonly AgentEvent[] {
    return this.events;
  }

  record(event: AgentEvent): void {
    publishAgentEvent(event);
    this.events.push(event);
    if (this.events.length > EVENT_BUFFER) this.events.splice(0, this.events.length - EVENT_BUFFER);
  }

  sessions(): Conversation[] {
    return this.harnesses.flatMap((h) => [...h.conversations()]);
  }

  session(id?: string): Conversation | undefined {
    const all = this.sessions();
    return id === undefined ? all[0] : all.find((s) => s.id === id);
  }

  installHandlers(): void {
    this.installQueries();
    this.approvals.install();
    setHandler(closeSignal, () => {
      this.closed = true;
    });
    setHandler(promptUpdate, (req) => this.prompt(req), { validator: (req) => this.validatePrompt(req) });
  }

  /** What every agent workflow answers, a session's too: the queries and manual compaction. */
  installQueries(): void {
    setHandler(messagesQuery, (id) => [...(this.session(id)?.messages() ?? [])]);
    setHandler(phaseQuery, () => ({ phase: this.phase, ...(this.idleTimeoutMs !== undefined ? { idleTimeoutMs: this.idleTimeoutMs } : {}) }));
    setHandler(compactionStateQuery, (id) => this.session(id)?.compactionState() ?? null);
    setHandler(contextBudgetQuery, (id) => this.session(id)?.contextBudget() ?? null);
    setHandler(conversationsQuery, () => this.sessions().map((s) => s.id));
    setHandler(eventsQuery, (limit) => this.events.slice(-(limit ?? EVENT_BUFFER)));
    setHandler(usageQuery, () => this.usage());
    setHandler(compactUpdate, (req) => this.compact(req), { validator: (req) => this.validateCompact(req) });
  }

  /** A session workflow serves (its host answers prompts): compaction requests wait for its conversation. */
  markServing(): void {
    this.phase = 'serving';
  }

  /** Runs in the update's validator: what is refused here never enters history and never waits. */
  private validatePrompt(req: PromptRequest): void {
    rejectWith(() => {
      const { text, sessionId } = parseWith(promptRequestSchema, req, 'prompt');
      const bytes = utf8Length(text);
      if (bytes > MAX_PROMPT_BYTES) throw new PromptTooLargeError(bytes, MAX_PROMPT_BYTES);
      if (this.phase === 'returned') throw new NotServingError('returned');
      if (this.phase === 'served') throw new NotServingError('serving-ended');
      if (this.phase === 'serving') this.assertKnownSession(sessionId);
    });
  }

  private validateCompact(req: CompactRequest | undefined): void {
    rejectWith(() => {
      const { sessionId } = parseWith(compactRequestSchema, req === undefined ? {} : req, 'compact request');
      if (this.phase === 'returned') throw new NotServingError('returned');
      if (this.phase !== 'starting') this.assertKnownSession(sessionId);
    });
  }

  private assertKnownSession(sessionId: string | undefined): void {
    if (this.sessions().length > 0 && !this.session(sessionId)) {
      throw new UnknownSessionError(sessionId ?? '(default)', this.sessions().map((s) => s.id));
    }
  }

  private async prompt({ text, sessionId }: PromptRequest): Promise<string> {
    this.promptsReceived += 1;
    this.promptsInFlight += 1;
    try {
      await condition(() => this.phase !== 'starting');
      if (this.phase === 'returned') throw new NotServingError(this.served ? 'serving-ended' : 'never-served');
      if (this.phase === 'served') throw new NotServingError('serving-ended');
      const session = await this.sessionFor(sessionId);
      return await streamTurn(currentUpdateInfo()?.id ?? `p${this.promptsReceived}`, text, () => session.prompt<string>(text));
    } catch (err) {
      throw encodeFailure(err); // fails the update; a plain Error would fail the workflow task instead
    } finally {
      this.promptsInFlight -= 1;
    }
  }

  private async compact(req: CompactRequest = {}): Promise<Awaited<ReturnType<Conversation['compact']>>> {
    try {
      const { sessionId, ...opts } = req;
      const session = await this.sessionFor(sessionId);
      return await session.compact({ ...opts, reason: 'manual' });
    } catch (err) {
      throw encodeFailure(err);
    }
  }

  /** The session, waiting a short grace period for one the run is still creating. */
  private async sessionFor(sessionId: string | undefined): Promise<Conversation> {
    await condition(() => this.session(sessionId) !== undefined || this.phase === 'returned', SESSION_GRACE_MS);
    const session = this.session(sessionId);
    if (!session) throw new UnknownSessionError(sessionId ?? '(default)', this.sessions().map((s) => s.id));
    return session;
  }

  private usage(): AgentUsage {
    const total: AgentUsage = { inputTokens: 0, outputTokens: 0, modelCalls: 0, summarizer: { inputTokens: 0, outputTokens: 0, calls: 0 } };
    for (const s of this.sessions()) {
      const u = s.usage();
      total.inputTokens += u.inputTokens;
      total.outputTokens += u.outputTokens;
      // Cache reads and writes are billed input too: leaving them out under-reports a cached run.
      if (u.cacheReadInputTokens !== undefined) total.cacheReadInputTokens = (total.cacheReadInputTokens ?? 0) + u.cacheReadInputTokens;
      if (u.cacheCreationInputTokens !== undefined) total.cacheCreationInputTokens = (total.cacheCreationInputTokens ?? 0) + u.cacheCreationInputTokens;
      total.modelCalls += u.modelCalls;
      total.summarizer.inputTokens += u.summarizer.inputTokens;
      total.summarizer.outputTokens += u.summarizer.outputTokens;
      total.summarizer.calls += u.summarizer.calls;
      total.cost = addCost(total.cost, u.cost);
    }
    return total;
  }
}
