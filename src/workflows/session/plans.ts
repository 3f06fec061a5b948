/**
 * Plans (core/sessions/plans.ts): in explore mode the session offers `submit_plan`; a submitted plan
 * waits as an approval does (./approvals: durable, suspended across continue-as-new, in the memo's
 * waiting list and `pendingApprovals`), is kept with the session (`fh.session.plans`), and is decided by
 * the update `fh.session.plan` (approve with an optional mode switch, or decline with a note) or by a
 * plain approve/deny of its call. The model reads the decision as the call's result.
 */
import { patched } from '@temporalio/workflow';
import { InterruptedError } from '../../core/errors';
import type { ToolCall, ToolVerdict } from '../../core/conversation';
import type { ToolDefinition } from '../../core/tools';
import { parseWith } from '../../core/validate';
import {
  PLAN_MAX_CHARS,
  PlanTooLargeError,
  planApprovedText,
  planDecisionSchema,
  planDeclinedText,
  submitPlanTool,
  SUBMIT_PLAN_TOOL,
  UnknownPlanError,
  type PlanDecision,
  type SessionPlan,
} from '../../core/sessions/plans';
import type { Approvals } from './approvals';
import type { SessionCore } from './core';

/** Since this patch a session in explore mode offers submit_plan (the model request's tools change). */
export const PLANS_PATCH = 'fh-session-plans';
/** Plans kept with the session (carried across continue-as-new); older decided ones are dropped. */
const KEPT_PLANS = 20;

export class Plans {
  constructor(
    private readonly s: SessionCore,
    private readonly approvals: Approvals,
  ) {}

  /**
   * submit_plan while the session is in explore mode, and while a plan call of the running turn is still
   * to be answered (a decision that switched the mode reaches a resumed turn after a continue-as-new).
   */
  offered(): readonly ToolDefinition[] {
    const s = this.s;
    const open = s.plans.some((p) => s.approvals.has(p.id));
    if (s.record.settings.permissionMode !== 'explore' && !open) return [];
    return patched(PLANS_PATCH) ? [submitPlanTool] : [];
  }

  isPlanCall(call: ToolCall, def: ToolDefinition): boolean {
    return call.name === SUBMIT_PLAN_TOOL && def === submitPlanTool;
  }

  /** A submit_plan call: kept as a pending plan, waits for the decision, answers the model with it. */
  async answer(call: ToolCall): Promise<ToolVerdict> {
    const s = this.s;
    const markdown = (call.input as { plan: string }).plan;
    if (markdown.length > PLAN_MAX_CHARS) {
      const err = new PlanTooLargeError(markdown.length);
      return { allow: false, content: `${err.code}: ${err.message}` };
    }
    let plan = this.find(call.id);
    if (!plan) {
      plan = { id: call.id, status: 'pending', markdown, messageId: s.current?.message.id ?? '', submittedAt: Date.now() };
      this.keep(plan);
    }
    let decision: { approved: boolean; note?: string };
    try {
      decision = await this.approvals.awaitDecision(call);
    } catch (err) {
      // An interrupted turn leaves no plan waiting (a suspended one still waits, in the next run).
      if (err instanceof InterruptedError && plan.status === 'pending') Object.assign(plan, { status: 'declined', decidedAt: Date.now(), note: 'the turn was interrupted' });
      throw err;
    }
    // Decided by a plain approve/deny of the call: the plan records it too (no mode switch).
    if (plan.status === 'pending') this.record(plan, decision);
    return plan.status === 'approved'
      ? { allow: false, isError: false, content: planApprovedText(plan, s.record.settings.permissionMode) }
      : { allow: false, content: planDeclinedText(plan.note) };
  }

  list(): SessionPlan[] {
    return this.s.plans.map((p) => ({ ...p }));
  }

  validateDecision(req: PlanDecision): void {
    const parsed = parseWith(planDecisionSchema, req, 'plan decision');
    const plan = this.find(parsed.planId);
    const pending = this.s.plans.filter((p) => p.status === 'pending').map((p) => p.id);
    if (!plan) throw new UnknownPlanError(parsed.planId, false, pending);
    // The call itself must still wait (a plain approve of it may have decided it a moment ago).
    const waiting = this.s.approvals.get(plan.id);
    if (plan.status !== 'pending' || !waiting || waiting.decision) throw new UnknownPlanError(parsed.planId, plan.status !== 'pending' || waiting?.decision !== undefined, pending);
  }

  /** Records the decision, switches the mode (before the agent's next tool calls), and wakes the waiting call. */
  decide(req: PlanDecision): SessionPlan {
    const plan = this.find(req.planId);
    if (!plan || plan.status !== 'pending') return { ...plan! };
    this.record(plan, req);
    if (req.approved && req.mode !== undefined) {
      this.s.record.settings = { ...this.s.record.settings, permissionMode: req.mode };
      this.s.edits += 1;
    }
    this.approvals.decide({ callId: plan.id, approved: req.approved, ...(req.note !== undefined ? { note: req.note } : {}) });
    return { ...plan };
  }

  private record(plan: SessionPlan, d: { approved: boolean; note?: string; mode?: PlanDecision['mode'] }): void {
    plan.status = d.approved ? 'approved' : 'declined';
    plan.decidedAt = Date.now();
    if (d.note !== undefined) plan.note = d.note;
    if (d.approved && d.mode !== undefined) plan.mode = d.mode;
  }

  private find(id: string): SessionPlan | undefined {
    return this.s.plans.find((p) => p.id === id);
  }

  private keep(plan: SessionPlan): void {
    const plans = this.s.plans;
    plans.push(plan);
    while (plans.length > KEPT_PLANS) {
      const i = plans.findIndex((p) => p.status !== 'pending');
      if (i < 0) break;
      plans.splice(i, 1);
    }
  }
}
