/**
 * Approvals in a plain agent run (not a session): a call of a tool with `needsApproval` waits in
 * workflow state, holding no worker slot, until a client decides it (`handle.approve(callId)` /
 * `handle.deny(callId, note)`, the update `fh.approve`). The wait survives workers; a decision for a call
 * that is not waiting is refused by the validator, before anything enters history.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { z } from 'zod';
import { makeEvent, type AgentEvent } from '../core/events';
import { deniedCallText, type ToolAuthorizer } from '../core/conversation';
import { UnknownToolCallError } from '../core/sessions/host-errors';
import { parseWith } from '../core/validate';
import { rejectWith } from '../wire/failures';
import { decideApprovalUpdate, pendingApprovalsQuery, type ApprovalDecision, type RunApproval } from '../wire/messages';
import { lazySchema } from '../core/lazy-schema';

const decisionSchema = lazySchema(() => z.object({ callId: z.string().min(1), approved: z.boolean(), note: z.string().max(4000).optional() }).strict());

export class RunApprovals {
  private readonly pending = new Map<string, RunApproval & { decision?: Omit<ApprovalDecision, 'callId'> }>();
  private readonly decided: string[] = [];

  constructor(private readonly record: (event: AgentEvent) => void) {}

  /** The harness's approver for calls that need approval. */
  readonly approver: ToolAuthorizer = async (call) => {
    const waiting: RunApproval & { decision?: Omit<ApprovalDecision, 'callId'> } = { callId: call.id, tool: call.name, input: call.input, requestedAt: Date.now() };
    this.pending.set(call.id, waiting);
    this.record(makeEvent('approval_requested', { id: call.id, name: call.name, input: call.input }, Date.now()));
    try {
      await condition(() => waiting.decision !== undefined);
    } finally {
      this.pending.delete(call.id);
    }
    this.decided.push(call.id);
    const d = waiting.decision!;
    return d.approved ? { allow: true } : { allow: false, content: deniedCallText(call.name, d.note) };
  };

  install(): void {
    setHandler(pendingApprovalsQuery, () => [...this.pending.values()].map(({ decision: _decision, ...a }) => a));
    setHandler(decideApprovalUpdate, (req) => this.decide(req), { validator: (req) => rejectWith(() => this.validate(req)) });
  }

  private validate(req: ApprovalDecision): void {
    const parsed = parseWith(decisionSchema, req, 'approval');
    const waiting = this.pending.get(parsed.callId);
    if (!waiting || waiting.decision) throw new UnknownToolCallError(parsed.callId, Boolean(waiting?.decision) || this.decided.includes(parsed.callId), [...this.pending.keys()]);
  }

  private decide(req: ApprovalDecision): void {
    const waiting = this.pending.get(req.callId);
    if (!waiting || waiting.decision) return;
    waiting.decision = req.note === undefined ? { approved: req.approved } : { approved: req.approved, note: req.note };
    this.record(makeEvent('approval_decided', { id: req.callId, name: waiting.tool, approved: req.approved, ...(req.note !== undefined ? { note: req.note } : {}) }, Date.now()));
  }
}
