/**
 * Small pieces of `fh chat` kept apart from the chat loop: the earlier conversation a reopened session
 * shows, which approval answers are for calls that no longer wait, and the line a compaction prints.
 */
import type { Entry } from '../../core/entries';
import { describeGate, type GateResult } from '../../core/context/compaction/gate';
import { FabricError } from '../../core/errors';
import { plural } from '../../core/plural';
import { conversationText } from '../session-text';

/** How many lines of the earlier conversation a reopened chat shows. */
const EARLIER_LINES = 10;

/** The last messages of a reopened session, one line each, after a note of how many are left out. */
export function earlierLines(messages: Entry[], sessionId: string): string[] {
  if (messages.length === 0) return [];
  const lines = conversationText(messages, false).split('\n');
  const shown = lines.slice(-EARLIER_LINES);
  const left = lines.length - shown.length;
  return left > 0 ? [`(${left} earlier messages: \`fh session show ${sessionId}\`)`, ...shown] : shown;
}

/** An approval answer refused because the call stopped waiting (its turn interrupted, or decided elsewhere). */
export function isStaleApproval(err: unknown): boolean {
  return err instanceof FabricError && (err.code === 'UNKNOWN_TOOL_CALL' || err.code === 'ALREADY_DECIDED');
}

/** The line a compaction decision prints: "(compacted: 40 → 21 messages; 12 facts, 2 restated)" when the gate ran. */
export function compactionLine(data: Record<string, unknown>): string {
  const gate = data.gate as GateResult | undefined;
  const checked = gate && typeof gate.checked === 'number' && typeof gate.restated === 'number' ? `; ${describeGate(gate)}` : '';
  return `(compacted: ${String(data.messagesBefore)} → ${String(data.messagesAfter)} messages${checked})`;
}

/** The chat's slash commands, as /help prints them. */
export const HELP = [
  '/interrupt        cancel the running turn (also Ctrl-C while a turn runs)',
  '/status [status]  show the status, or set it (todo, in-progress, needs-review, done, cancelled, …)',
  '/title <title>    rename the session',
  '/mode <mode>      permission mode: explore, ask, execute',
  '/model <model>    the model of the next turns (within the connection)',
  '/connection <n>   the model connection (only before the first message: then it is locked)',
  '/attach <file>    send a file (image, PDF, text) with your next message',
  '/exit             quit (also Ctrl-C at an idle prompt); the session goes on',
].join('\n');

/** What the chat says when it quits (`/exit`, Ctrl-C) with messages it sent still being answered: the session answers them without the window. */
export function leftWaitingLine(waiting: number, sessionId: string): string {
  return `(left ${plural(waiting, 'message', 'messages')} being answered; \`fh session show ${sessionId}\` shows them)\n`;
}
