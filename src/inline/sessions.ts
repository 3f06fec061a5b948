/**
 * Inline sessions: an agent whose `run` calls `harness.serve()`, run in this process, with its
 * conversation kept in a JSONL file (./session-files) so a later `openSession` with the same id
 * continues it. `InlineSession.prompt` is to an inline session what a client's prompt is to a session
 * workflow: `serve()` answers it in the run's first conversation.
 */
import type { InlinePorts } from './ports';
import * as path from 'node:path';
import { z } from 'zod';
import { parseAgentInput, type AgentDefinition, type InvokeOptions } from '../core/agent';
import type { Entry } from '../core/entries';
import { NotServingError } from '../core/errors';
import { Harness, type Flavour, type InitOptions, type PromptHost, type ServeOptions, type SessionOptions } from '../core/harness';
import type { RuntimePorts } from '../core/ports';
import { promptTextSchema, type Conversation, type ToolAuthorizer } from '../core/conversation';
import { parseWith } from '../core/validate';
import { parseOpenSessionOptions } from './invoke-options';
import { SessionAgentMismatchError, SessionExistsError, SessionNotFoundError } from './session-errors';
import { checkSessionId, JsonlSessionStore, type InlineSessionHeader, type ListSessionsOptions } from './session-files';
import { fallbackTitle, sessionSlug, statusAfter } from './session-meta';

export interface OpenSessionOptions extends InvokeOptions {
  /** The sessions directory (default: $FH_SESSIONS_DIR, else ~/.local/share/fabric-harness/sessions). */
  dir?: string;
  /** An existing session's id continues it; a new id (a slug) starts one under that id. Default: a fresh slug. */
  id?: string;
  /** The run's input (validated by the agent's schema), given on every open: it is not saved. */
  input?: unknown;
  /** A title set here is never replaced by one made from the first message. */
  title?: string;
}

export interface InlineSession {
  readonly id: string;
  /** The header as last saved, or as it will be saved after the prompt in progress. */
  header(): InlineSessionHeader;
  /** Answered by the run's `harness.serve()` in its first conversation; saved once answered. */
  prompt(text: string): Promise<string>;
  /** The conversation (the saved entries until the run makes its first conversation). */
  messages(): readonly Entry[];
  /** Ends serving once the prompts already sent are answered, waits for `run` to return and saves. Throws what `run` threw. */
  close(): Promise<void>;
}

const NEW_ID_ATTEMPTS = 20;

export async function openSession(def: AgentDefinition, options: OpenSessionOptions = {}): Promise<InlineSession> {
  parseOpenSessionOptions(options);
  if (options.id !== undefined) checkSessionId(options.id);
  const input = parseAgentInput(def, options.input);
  const invoke = require('./invoke') as typeof import('./invoke'); // lazily: the Anthropic client loads on first use
  invoke.checkDeclaredTools(def, options);
  const store = new JsonlSessionStore({ dir: options.dir });
  const { header, entries } = await openOrCreate(store, def.name, options);
  const conversation = new ServedConversation(store, header, entries);
  const settings = header.settings;
  const opened: InlinePorts[] = [];
  const init = invoke.inlineInit(
    def.flavour,
    { ...options, model: settings.model, cwd: settings.workingDirectory },
    (ports, initOptions, flavour, cwd, approver) => new ServingHarness(ports, initOptions, flavour, cwd, conversation, approver),
    def.name,
    opened,
  );
  // The run's MCP connections end with it.
  const run = def.run({ init, input });
  conversation.started(run.finally(() => Promise.all(opened.map((p) => p.close()))));
  return conversation;
}

/** Headers of the sessions in `dir`, most recently active first; reads only each file's first line. */
export async function listInlineSessions(options: ListSessionsOptions & { dir?: string } = {}): Promise<InlineSessionHeader[]> {
  return new JsonlSessionStore({ dir: options.dir }).list(options);
}

async function openOrCreate(store: JsonlSessionStore, agent: string, options: OpenSessionOptions): Promise<{ header: InlineSessionHeader; entries: Entry[] }> {
  const now = Date.now();
  const given = { model: options.model, workingDirectory: options.cwd === undefined ? undefined : path.resolve(options.cwd) };
  if (options.id !== undefined) {
    try {
      const saved = await store.load(options.id);
      if (saved.header.agent !== agent) throw new SessionAgentMismatchError(options.id, saved.header.agent, agent);
      const header: InlineSessionHeader = {
        ...saved.header,
        title: options.title ?? saved.header.title,
        lastUsedAt: now,
        settings: { ...saved.header.settings, ...stripUndefined(given) },
      };
      return { header, entries: saved.entries };
    } catch (err) {
      if (!(err instanceof SessionNotFoundError)) throw err;
      return { header: await store.create(newHeader(options.id, agent, options.title, given, now)), entries: [] };
    }
  }
  for (let attempt = 0; ; attempt++) {
    // A taken slug means another one, never an error; after many, a random suffix makes it unique.
    const slug = sessionSlug(now);
    const id = attempt < NEW_ID_ATTEMPTS ? slug : `${slug}-${Math.random().toString(36).slice(2, 8)}`;
    try {
      return { header: await store.create(newHeader(id, agent, options.title, given, now)), entries: [] };
    } catch (err) {
      if (!(err instanceof SessionExistsError) || attempt > NEW_ID_ATTEMPTS + 5) throw err;
    }
  }
}

function newHeader(id: string, agent: string, title: string | undefined, settings: InlineSessionHeader['settings'], now: number): InlineSessionHeader {
  return {
    version: 1,
    id,
    agent,
    ...(title !== undefined ? { title } : {}),
    status: 'todo',
    labels: [],
    flagged: false,
    archived: false,
    createdAt: now,
    lastUsedAt: now,
    messageCount: 0,
    settings: stripUndefined(settings),
  };
}

/** A harness whose `serve()` answers the inline session's prompts, and whose first conversation continues the saved one. */
class ServingHarness extends Harness {
  constructor(
    ports: RuntimePorts,
    options: InitOptions,
    flavour: Flavour,
    cwd: string,
    private readonly conversation: ServedConversation,
    approver?: ToolAuthorizer,
  ) {
    const host: PromptHost & { harness?: Harness } = { serve: (o) => conversation.serve(host.harness!, o) };
    super(ports, options, flavour, cwd, host, undefined, approver);
    host.harness = this;
  }

  override async session(options?: SessionOptions): Promise<Conversation> {
    const session = await super.session(options);
    this.conversation.sessionCreated(session);
    return session;
  }
}

interface PendingPrompt {
  text: string;
  resolve: (reply: string) => void;
  reject: (err: unknown) => void;
}

type RunOutcome = { ok: true } | { ok: false; error: unknown };

class ServedConversation implements InlineSession {
  private queue: PendingPrompt[] = [];
  private wake?: () => void;
  private serving = false;
  private everServed = false;
  private closing = false;
  private outcome?: RunOutcome;
  private run: Promise<unknown> = Promise.resolve();
  /** The conversation prompts go to: the run's first one. */
  private conversation?: Conversation;
  /** What was last written: a save after `run` returns is skipped when nothing changed. */
  private savedAs: { entries: readonly Entry[]; length: number };

  constructor(
    private readonly store: JsonlSessionStore,
    private current: InlineSessionHeader,
    private readonly saved: Entry[],
  ) {
    this.savedAs = { entries: saved, length: saved.length };
  }

  get id(): string {
    return this.current.id;
  }

  header(): InlineSessionHeader {
    return structuredClone(this.current);
  }

  messages(): readonly Entry[] {
    return this.conversation?.messages() ?? this.saved;
  }

  prompt(text: string): Promise<string> {
    try {
      parseWith(z.object({ text: promptTextSchema }), { text }, 'prompt');
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.outcome) return Promise.reject(this.notServing());
    if (this.closing) return Promise.reject(new NotServingError('serving-ended'));
    return new Promise<string>((resolve, reject) => {
      this.queue.push({ text, resolve, reject });
      this.wake?.();
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    this.wake?.();
    try {
      await this.run;
    } finally {
      await this.saveIfChanged();
    }
  }

  started(run: Promise<unknown>): void {
    this.run = run.then(
      () => this.ended({ ok: true }),
      (error) => {
        this.ended({ ok: false, error });
        throw error;
      },
    );
    this.run.catch(() => undefined); // close() reports it; an unawaited failure must not crash the process
  }

  /** The first conversation the run makes continues the saved one. */
  sessionCreated(session: Conversation): void {
    if (this.conversation) return;
    if (this.saved.length > 0) session.restore({ entries: this.saved });
    this.conversation = session;
    this.savedAs = { entries: session.messages(), length: session.messages().length };
  }

  /** `harness.serve()`: answers queued prompts one at a time until close(); resolves to how many it answered. */
  async serve(harness: Harness, _options: ServeOptions): Promise<number> {
    // Inline, the caller that opened the session decides when it ends: idleTimeoutMs does not apply.
    if (this.serving) return 0;
    this.serving = true;
    this.everServed = true;
    let answered = 0;
    try {
      for (;;) {
        const next = this.queue.shift();
        if (next) {
          if (await this.answer(harness, next)) answered += 1;
          continue;
        }
        if (this.closing || this.outcome) return answered;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      this.serving = false;
    }
  }

  private async answer(harness: Harness, pending: PendingPrompt): Promise<boolean> {
    try {
      const session = this.conversation ?? harness.conversations()[0] ?? (await harness.session());
      this.sessionCreated(session);
      const now = Date.now();
      this.current = {
        ...this.current,
        title: this.current.title ?? fallbackTitle(pending.text),
        status: statusAfter(this.current.status, 'user-message'),
        lastUsedAt: now,
      };
      let reply: string;
      try {
        reply = await session.prompt(pending.text);
      } finally {
        // A failed prompt is rolled back, and the turn is over either way.
        this.current = { ...this.current, status: statusAfter(this.current.status, 'turn-done'), lastUsedAt: Date.now() };
      }
      this.current.lastMessageAt = this.current.lastUsedAt;
      this.current.messageCount += 1; // an answered message (a failed one was rolled back)
      await this.save();
      pending.resolve(reply);
      return true;
    } catch (err) {
      await this.save().catch(() => undefined);
      pending.reject(err);
      return false;
    }
  }

  private async save(): Promise<void> {
    const entries = this.messages();
    this.current = await this.store.save(this.current, entries);
    this.savedAs = { entries, length: entries.length };
  }

  private async saveIfChanged(): Promise<void> {
    const entries = this.messages();
    if (entries !== this.savedAs.entries || entries.length !== this.savedAs.length) await this.save();
  }

  private ended(outcome: RunOutcome): void {
    this.outcome = outcome;
    for (const pending of this.queue.splice(0)) pending.reject(this.notServing());
    this.wake?.();
  }

  private notServing(): unknown {
    if (this.outcome && !this.outcome.ok) return this.outcome.error;
    return new NotServingError(this.everServed ? 'returned' : 'never-served');
  }
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
