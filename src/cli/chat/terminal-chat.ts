/**
 * The terminal chat loop of `fh chat`: reads lines, sends them as messages, follows the session's stream
 * (text as it is generated, tool calls, results, approval requests) and asks approvals in the prompt.
 */
import * as readline from 'node:readline';
import type { StreamEnvelope, StreamEvent } from '../../wire/stream';
import type { SessionHandle } from '../../client/sessions';
import type { LiveBrokerClient } from '../../client/stream/broker-transport';
import type { SessionInfo } from '../../wire/session-messages';
import { FabricError } from '../../core/errors';
import { asCliError } from '../context';
import { EXIT, usage } from '../errors';
import { PERMISSION_MODES } from '../../core/sessions/settings';
import { compactionLine, earlierLines, HELP, isStaleApproval, leftWaitingLine } from './extras';
import { answerPlan, isPlanQuestion, PLAN_QUESTION, planLines } from './plans';
import { compactJson, styles } from './styles';
import { subAgentLines } from './sub-agent-lines';
import { StagedAttachments } from './attach';

export class Chat {
  private readonly out = process.stdout;
  private readonly tty = Boolean(process.stdout.isTTY);
  private readonly s = styles(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
  private readonly rl: readline.Interface;
  /** Messages sent and not answered yet, in order. */
  private readonly waiting: string[] = [];
  /** Approval requests to ask, in order; `asking` is the one on screen. */
  private readonly questions: Array<{ callId: string; tool: string; input: unknown }> = [];
  private readonly asked = new Set<string>();
  private readonly attachments = new StagedAttachments();
  private asking: { callId: string; tool: string } | undefined;
  /** Texts the model produced already shown (so the reply is not printed twice). */
  private shownTexts = new Set<string>();
  private interruptSent = false;
  private draining: Promise<void> | undefined;
  private closed = false;
  private readonly following = new AbortController();
  /** The model text being printed as it streams (a line left open), by call and attempt. */
  private open: { callId: string; attempt: number; text: string } | undefined;
  /** Turns whose end the stream showed, and who waits for one. */
  private readonly turnsEnded = new Set<string>();
  private readonly turnWaiters = new Map<string, () => void>();
  private finish!: (code: number) => void;

  constructor(
    private readonly handle: SessionHandle,
    private readonly info: SessionInfo,
    private readonly live: { pollMs: number; broker?: LiveBrokerClient }, // live text: the broker's, else Temporal's every pollMs
  ) {
    this.rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: Boolean(process.stdin.isTTY && process.stdout.isTTY) });
  }

  async run(): Promise<number> {
    const done = new Promise<number>((resolve) => (this.finish = resolve));
    const i = this.info;
    // Listen from the first moment: a line typed while the earlier conversation loads is kept, and
    // handled once the chat follows the stream (readline drops a line nobody listens for).
    const early: string[] = [];
    let ready = false;
    this.rl.on('line', (line) => (ready ? void this.onLine(line) : early.push(line)));
    this.rl.on('SIGINT', () => this.onInterruptKey());
    this.rl.on('close', () => void this.onClose());
    this.setPrompt();
    this.print(
      this.s.bold(`session ${i.id}`) +
        this.s.dim(` — ${i.title ?? '(untitled)'} · ${i.agent} · ${i.status} · mode ${i.settings.permissionMode} · /help, /exit`),
    );
    for (const line of earlierLines(await this.handle.messages().catch(() => []), i.id)) this.print(this.s.dim(line));
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { streamPosition } = require('../../client/stream/handles') as typeof import('../../client/stream/handles');
    const from = await streamPosition(this.handle);
    for (const a of i.pendingApprovals) this.ask(a.callId, a.tool, a.input);
    void this.follow(from);
    // In order: a line typed while these are handled queues behind them.
    while (early.length) await this.onLine(early.shift()!);
    ready = true;
    if (this.tty) this.rl.prompt();
    return done;
  }

  // -------------------------------------------------------------------------------------------------------
  // Input

  private async onLine(raw: string): Promise<void> {
    const line = raw.trim();
    try {
      if (this.asking) return await this.answer(line);
      if (line.startsWith('/')) return await this.command(line);
      if (!line) return;
      const sent = await this.handle.send(line, this.attachments.take());
      this.waiting.push(sent.messageId);
      if (sent.position > 0 || this.waiting.length > 1) this.print(this.s.dim(`(queued: answered after the running turn${sent.position > 0 ? ` and ${sent.position} more` : ''})`));
      this.drain();
    } catch (err) {
      this.error(err);
    } finally {
      this.setPrompt();
      if (!this.closed && this.tty) this.rl.prompt(true);
    }
  }

  private async answer(line: string): Promise<void> {
    const q = this.asking!;
    const m = /^(y|yes)(?:\s+(.*))?$/i.exec(line);
    const note = m ? m[2]?.trim() || undefined : /^(n|no)?$/i.test(line) ? undefined : line;
    this.asking = undefined;
    let said = `  ${m ? 'approved' : 'denied'} ${q.tool}${note ? ` (${note})` : ''}`;
    try {
      if (isPlanQuestion(q.tool)) said = await answerPlan(this.handle, q.callId, line);
      else if (m) await this.handle.approve(q.callId, note);
      else await this.handle.deny(q.callId, note);
    } catch (err) {
      if (!isStaleApproval(err)) throw err;
      this.print(this.s.dim(`  ${q.tool} no longer waits for an answer`));
      return this.nextQuestion();
    }
    this.print(this.s.dim(said));
    this.nextQuestion();
  }

  /** Forgets the approvals being asked: their turn ended, so an answer would be for a call that no longer waits. */
  private dropQuestions(): void {
    if (this.asking) this.print(this.s.dim(`  ${this.asking.tool}: no longer waiting (the turn was interrupted)`));
    this.asking = undefined;
    this.questions.length = 0;
    this.setPrompt();
  }

  private async command(line: string): Promise<void> {
    const [cmd, ...rest] = line.slice(1).split(/\s+/);
    const arg = rest.join(' ').trim();
    const need = (what: string) => {
      if (!arg) throw usage(`/${cmd} needs ${what}`);
      return arg;
    };
    switch (cmd) {
      case 'exit':
      case 'quit':
        return this.quit();
      case 'help':
        return this.print(HELP);
      case 'interrupt':
        return this.interrupt();
      case 'status': {
        // Alone it shows the status (and the turn); with a status it sets it.
        const i = arg ? await this.handle.setStatus(arg) : await this.handle.info();
        return this.print(this.s.dim(`status: ${i.status}${arg ? '' : ` · turn ${i.processing ? 'running' : 'idle'} · mode ${i.settings.permissionMode}`}`));
      }
      case 'title': {
        const i = await this.handle.setTitle(need('a title'));
        return this.print(this.s.dim(`title: ${i.title}`));
      }
      case 'mode': {
        const i = await this.handle.updateSettings({ permissionMode: need(`a mode (${PERMISSION_MODES.join(', ')})`) as never });
        return this.print(this.s.dim(`mode: ${i.settings.permissionMode}`));
      }
      case 'attach': return this.print(this.s.dim(await this.attachments.add(need('a file')))); // prettier-ignore
      case 'model': {
        const i = await this.handle.updateSettings({ model: need('a model name') });
        return this.print(this.s.dim(`model: ${i.settings.model} (connection ${i.settings.connection})`));
      }
      case 'connection': {
        // Locked after the first message: the session refuses (CONNECTION_LOCKED) and this.error prints why.
        const i = await this.handle.updateSettings({ connection: need('a connection name') });
        return this.print(this.s.dim(`connection: ${i.settings.connection}${i.settings.model ? ` · model ${i.settings.model}` : ''}`));
      }
      default:
        return this.print(this.s.red(`unknown command /${cmd}; /help lists them`));
    }
  }

  private onInterruptKey(): void {
    if (this.waiting.length > 0 && !this.interruptSent) {
      void this.interrupt();
      return;
    }
    this.quit();
  }

  private async interrupt(): Promise<void> {
    this.interruptSent = true;
    try {
      const r = await this.handle.interrupt();
      if (!r.interrupted) this.print(this.s.dim('nothing to interrupt'));
      else this.dropQuestions(); // the interrupted turn's approvals no longer wait: no prompt for them
    } catch (err) {
      this.error(err);
    }
  }

  private quit(): void {
    if (this.closed) return;
    this.closed = true;
    this.following.abort();
    this.rl.close();
    if (this.waiting.length) this.out.write(this.s.dim(leftWaitingLine(this.waiting.length, this.handle.id)));
    this.finish(EXIT.OK);
  }

  /** End of input (a pipe, Ctrl-D): wait for the answers still owed, then quit. */
  private async onClose(): Promise<void> {
    if (this.closed) return;
    await this.draining;
    this.quit();
  }

  // -------------------------------------------------------------------------------------------------------
  // Turns

  /** Awaits each owed reply in order (what happens meanwhile comes from the stream). */
  private drain(): void {
    if (this.draining) return;
    this.draining = (async () => {
      try {
        while (this.waiting.length > 0) {
          const messageId = this.waiting[0]!;
          let reply: string | undefined;
          let failed: unknown;
          try {
            reply = await this.handle.reply(messageId);
          } catch (err) {
            failed = err;
          }
          await this.turnShown(messageId);
          this.waiting.shift();
          this.interruptSent = false;
          if (failed !== undefined) {
            if (failed instanceof FabricError && failed.code === 'INTERRUPTED') this.print(this.s.yellow('(interrupted)'));
            else this.error(failed);
            if (failed instanceof FabricError && (failed.code === 'SESSION_CLOSED' || failed.code === 'SESSION_NOT_FOUND')) return this.quit();
          } else if (!this.shownTexts.has(reply!.trim())) {
            this.print(reply!);
          }
          this.shownTexts = new Set();
        }
      } finally {
        this.draining = undefined;
      }
    })();
  }

  /** Resolves once the stream showed the turn's end (or after a few seconds: the reply is printed then). */
  private turnShown(messageId: string): Promise<void> {
    if (this.turnsEnded.delete(messageId)) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(done, 5_000);
      const waiters = this.turnWaiters;
      function done() {
        clearTimeout(t);
        waiters.delete(messageId);
        resolve();
      }
      waiters.set(messageId, done);
    });
  }

  /** Follows the session's stream from `from`; reconnects from where it was after a failure. */
  private async follow(from: number): Promise<void> {
    let next = from;
    while (!this.closed) {
      try {
        for await (const env of this.handle.stream({ from: next, signal: this.following.signal, livePollMs: this.live.pollMs, ...(this.live.broker ? { broker: this.live.broker } : {}) })) {
          next = env.offset + 1;
          this.show(env);
        }
        if (!this.closed) return this.quit(); // the session ended
      } catch {
        // A session continuing as new or a worker restarting: read on from the same offset shortly.
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  private show(env: StreamEnvelope): void {
    const e: StreamEvent = env.event;
    const width = Math.max(40, (this.out.columns ?? 120) - 4);
    if (env.subAgent) return this.showSubAgent(env.subAgent.path, e, width);
    switch (e.type) {
      case 'attempt_started':
        if (this.open && this.open.callId === e.callId && this.open.attempt !== e.attempt) {
          this.closeText();
          this.print(this.s.dim('(the model call is retried: the text above is discarded)'));
        }
        return;
      case 'text_delta':
        return this.streamText(e.callId ?? '', e.attempt ?? 1, e.text);
      case 'block_stopped':
        if (this.open && this.open.callId === e.callId) this.closeText();
        return;
      case 'message_end':
        this.closeText();
        for (const b of e.content) if (b.type === 'text') this.shownTexts.add(b.text.trim());
        return;
      case 'turn_ended': {
        this.closeText();
        const id = e.messageId ?? '';
        const waiter = this.turnWaiters.get(id);
        if (waiter) waiter();
        else this.turnsEnded.add(id);
        return;
      }
      case 'tool_started':
        return this.print(this.s.cyan(`→ ${e.name} ${compactJson(e.input, width - e.name.length - 3)}`));
      case 'tool_ended': {
        const first = e.content.split('\n').find((l) => l.trim()) ?? '';
        const text = `  ${e.isError ? '✗ ' : ''}${first.length > width ? `${first.slice(0, width - 1)}…` : first}`;
        return this.print(e.isError ? this.s.red(text) : this.s.dim(text));
      }
      case 'approval_requested':
        return this.ask(e.callId ?? '', e.name, e.input);
      case 'interrupted':
        this.dropQuestions();
        return this.print(this.s.yellow(`⨯ interrupted during the ${e.during}`));
      case 'error':
        return this.print(this.s.red(`! ${e.message} [${e.code}]`));
      case 'warning':
        return this.print(this.s.yellow(`! ${e.message}`));
      case 'decision':
        if (e.kind === 'compaction') return this.print(this.s.dim(compactionLine(e.data)));
        return;
      default:
        return;
    }
  }

  /** A sub-agent's event (see ./sub-agent-lines): dimmed, a failed tool red. */
  private showSubAgent(path: readonly string[], e: StreamEvent, width: number): void {
    for (const line of subAgentLines(path, e, width)) this.print(line.kind === 'error' ? this.s.red(line.text) : line.kind === 'tool' ? this.s.dim(this.s.cyan(line.text)) : this.s.dim(line.text));
  }

  /** Model text as it is generated: one line left open above the prompt until its block ends. */
  private streamText(callId: string, attempt: number, text: string): void {
    if (this.closed) return;
    if (!this.open || this.open.callId !== callId || this.open.attempt !== attempt) {
      this.closeText();
      if (this.tty) {
        readline.cursorTo(this.out, 0);
        readline.clearLine(this.out, 0);
      }
      this.open = { callId, attempt, text: '' };
    }
    this.open.text += text;
    this.out.write(text);
  }

  private closeText(): void {
    if (!this.open) return;
    const text = this.open.text;
    this.open = undefined;
    this.out.write('\n');
    if (text.trim()) this.shownTexts.add(text.trim());
    if (this.tty && !this.closed) this.rl.prompt(true);
  }

  // -------------------------------------------------------------------------------------------------------
  // Approvals

  private ask(callId: string, tool: string, input: unknown): void {
    if (this.asked.has(callId)) return;
    this.asked.add(callId);
    this.questions.push({ callId, tool, input });
    if (!this.asking) this.nextQuestion();
  }

  private nextQuestion(): void {
    const q = this.questions.shift();
    if (!q) return this.setPrompt();
    this.asking = { callId: q.callId, tool: q.tool };
    this.setPrompt(); // before printing: the prompt redrawn under the question is the approval one
    if (isPlanQuestion(q.tool)) return [...planLines(q.input), PLAN_QUESTION].forEach((l) => this.print(this.s.yellow(l)));
    this.print(this.s.yellow(`? ${q.tool} ${compactJson(q.input, 200)} — approve? [y/N/note]`));
  }

  // -------------------------------------------------------------------------------------------------------
  // Output

  private setPrompt(): void {
    this.rl.setPrompt(this.asking ? this.s.yellow('approve? › ') : this.s.bold('you › '));
  }

  /** A line above the prompt: the line being typed is redrawn after it. */
  private print(text: string): void {
    this.closeText();
    if (this.closed) {
      this.out.write(`${text}\n`);
      return;
    }
    if (this.tty) {
      readline.cursorTo(this.out, 0);
      readline.clearLine(this.out, 0);
    }
    this.out.write(`${text}\n`);
    if (this.tty) this.rl.prompt(true);
  }

  private error(err: unknown): void {
    this.print(this.s.red(`! ${asCliError(err).message}`));
  }
}

