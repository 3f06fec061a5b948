/**
 * Permission modes and approvals: the harness asks before each tool call; a call that needs approval
 * waits for a decision (or for the run to suspend the turn at a continue-as-new), and decisions are
 * remembered so a late second one is "already decided", not "unknown".
 */
import { condition, isCancellation } from '@temporalio/workflow';
import { z } from 'zod';
import { InterruptedError, TurnSuspendedError } from '../../core/errors';
import type { ToolAuthorizer, ToolCall, ToolVerdict } from '../../core/conversation';
import type { ToolDefinition } from '../../core/tools';
import { UnknownToolCallError } from '../../core/sessions/host-errors';
import { deniedText, permissionFor, refusedInExploreText, toolEffect } from '../../core/sessions/permissions';
import { parseWith } from '../../core/validate';
import { approvalNeeded } from '../../core/tools';
import { SESSION_APPROVALS_MEMO_KEY, SESSION_APPROVALS_MEMO_MAX, type WaitingApproval } from '../../wire/session-messages';
import type { SessionCore } from './core';
import { memoMirror } from '../memo-mirror';

/** Decided tool calls remembered, so a late second decision is "already decided", not "unknown". */
const REMEMBERED_DECISIONS = 200;

type Decision = { callId: string; approved: boolean; note?: string };

/** Since this patch a session keeps its tool calls waiting for approval in its memo (SESSION_APPROVALS_MEMO_KEY). */
export const APPROVALS_MEMO_PATCH = 'fh-session-approvals-memo';

export class Approvals {
  /** The memo's list of the calls waiting for a decision (../memo-mirror: a continued run starts from the memo it inherits). */
  private readonly memo = memoMirror<WaitingApproval>(SESSION_APPROVALS_MEMO_KEY, APPROVALS_MEMO_PATCH);

  constructor(private readonly s: SessionCore) {}

  /** Set by the host: answers submit_plan calls (./plans). */
  plans: { isPlanCall(call: ToolCall, def: ToolDefinition): boolean; answer(call: ToolCall): Promise<ToolVerdict> } | undefined;

  /** For the harness: asked before each tool call (permission mode, approvals, plans). */
  readonly authorize: ToolAuthorizer = async (call, def) => {
    const s = this.s;
    if (this.plans?.isPlanCall(call, def)) return this.plans.answer(call);
    const verdict = permissionFor(s.record.settings.permissionMode, toolEffect(def));
    // A tool that needs approval (needsApproval) waits for it in every mode that would run it.
    if (verdict === 'run' && !approvalNeeded(def, call.input)) return { allow: true };
    if (verdict === 'refuse') return { allow: false, content: refusedInExploreText(call.name) };
    const decision = await this.awaitDecision(call);
    return decision.approved ? { allow: true } : { allow: false, content: deniedText(call.name, decision.note) };
  };

  /**
   * Waits for a person's decision on a call (a tool call, a plan): durable workflow state, no worker slot.
   * Throws TurnSuspendedError when the run continues as new meanwhile (the next run waits on), and
   * InterruptedError when the turn is cancelled.
   */
  async awaitDecision(call: ToolCall): Promise<{ approved: boolean; note?: string }> {
    const s = this.s;
    let approval = s.approvals.get(call.id);
    if (!approval) {
      approval = { callId: call.id, tool: call.name, input: call.input, requestedAt: Date.now(), messageId: s.current?.message.id ?? '' };
      s.approvals.set(call.id, approval);
      s.emit('approval_requested', { id: call.id, name: call.name, input: call.input });
    }
    // Also for a call carried from the previous run: its memo says so already unless that run lost it.
    this.syncMemo();
    const waiting = approval;
    try {
      await condition(() => waiting.decision !== undefined || s.suspending);
    } catch (err) {
      if (isCancellation(err)) {
        s.approvals.delete(call.id);
        this.syncMemo();
        throw new InterruptedError();
      }
      throw err;
    }
    if (!waiting.decision) throw new TurnSuspendedError();
    s.approvals.delete(call.id);
    this.remember(call.id);
    return waiting.decision;
  }

  validateDecision(req: Decision): void {
    const parsed = parseWith(
      z.object({ callId: z.string().min(1), approved: z.boolean(), note: z.string().max(4000).optional() }).strict(),
      req,
      'approval',
    );
    const approvals = this.s.approvals;
    const pending = approvals.get(parsed.callId);
    if (!pending) throw new UnknownToolCallError(parsed.callId, this.s.decided.includes(parsed.callId), [...approvals.keys()]);
    if (pending.decision) throw new UnknownToolCallError(parsed.callId, true, [...approvals.keys()]);
  }

  decide(req: Decision): void {
    const pending = this.s.approvals.get(req.callId);
    if (!pending || pending.decision) return;
    pending.decision = req.note === undefined ? { approved: req.approved } : { approved: req.approved, note: req.note };
    this.s.emit('approval_decided', { id: req.callId, name: pending.tool, approved: req.approved, ...(req.note !== undefined ? { note: req.note } : {}) });
    this.syncMemo();
  }

  /**
   * Upserts the memo when the set of undecided calls changed since it was last sent (a memo upsert is a
   * history event: one per request and one per decision, none for a turn that needs no approval).
   */
  private syncMemo(): void {
    this.memo(
      [...this.s.approvals.values()]
        .filter((a) => !a.decision)
        .slice(0, SESSION_APPROVALS_MEMO_MAX)
        .map((a) => ({ callId: a.callId, tool: a.tool })),
    );
  }

  private remember(callId: string): void {
    this.s.decided.push(callId);
    if (this.s.decided.length > REMEMBERED_DECISIONS) this.s.decided.shift();
  }
}
