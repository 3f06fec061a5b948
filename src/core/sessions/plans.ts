/**
 * Plans: in explore mode a session offers the agent `submit_plan`. A submitted plan (Markdown) waits
 * for the user like a tool call waiting for approval; approved (optionally switching the session to ask
 * or execute) its text goes back to the model as the call's result, so the agent follows it; declined,
 * the user's note does. Pure: the tool's declaration, the limits, the texts and the errors.
 */
import { z } from 'zod';
import { FabricError } from '../errors';
import type { ToolDefinition } from '../tools';
import type { PermissionMode } from './settings';
import { lazySchema } from '../lazy-schema';

export const SUBMIT_PLAN_TOOL = 'submit_plan';
/** A plan's Markdown is at most this many characters (it travels in history as the tool call's input). */
export const PLAN_MAX_CHARS = 20_000;
/** The modes an approval may switch the session to (explore is where plans come from). */
export const PLAN_MODES = ['ask', 'execute'] as const;
export type PlanMode = (typeof PLAN_MODES)[number];
export type PlanStatus = 'pending' | 'approved' | 'declined';

/** A plan kept with the session: listable (`session.plans()`), carried across continue-as-new. */
export interface SessionPlan {
  /** The id of the submit_plan call that submitted it. */
  id: string;
  status: PlanStatus;
  markdown: string;
  /** The message whose turn submitted it. */
  messageId: string;
  submittedAt: number;
  decidedAt?: number;
  /** The user's note with the decision. */
  note?: string;
  /** The permission mode the approval switched the session to. */
  mode?: PlanMode;
}

/** A decision on a plan: the update `fh.session.plan`. */
export interface PlanDecision {
  planId: string;
  approved: boolean;
  note?: string;
  mode?: PlanMode;
}

export const planDecisionSchema = lazySchema(() => z
  .object({
    planId: z.string().min(1),
    approved: z.boolean(),
    note: z.string().max(4000).optional(),
    mode: z.enum(PLAN_MODES).optional(),
  })
  .strict()
  .refine((d) => d.approved || d.mode === undefined, { path: ['mode'], message: 'only an approval switches the mode' }));

/**
 * The tool offered in explore mode. Its input is not length-limited in the schema: an oversized plan
 * is answered with PLAN_TOO_LARGE (a named error the model reads), not a schema message.
 */
export const submitPlanTool: ToolDefinition<{ plan: string }> = {
  kind: 'tool',
  name: SUBMIT_PLAN_TOOL,
  description:
    'Submit a plan (Markdown) for the user to approve before you change anything. This session is in explore mode: ' +
    'write tools are refused until the user approves a plan (they may switch the session to ask or execute mode). ' +
    'The call waits for the decision; its result is the approved plan to follow, or the user\'s note if they declined.',
  input: lazySchema(() => z.object({ plan: z.string().min(1).describe('The plan, in Markdown: what you will change, in order, and why.') })),
  readOnly: true,
};

/** A plan longer than PLAN_MAX_CHARS: the model reads this and shortens it. */
export class PlanTooLargeError extends FabricError {
  constructor(readonly chars: number) {
    super('PLAN_TOO_LARGE', `plan: ${chars} characters; a plan may have at most ${PLAN_MAX_CHARS}. Shorten it and submit it again.`);
  }
}

/** A decision naming a plan that does not wait for one (unknown, or decided already). */
export class UnknownPlanError extends FabricError {
  constructor(
    readonly planId: string,
    readonly alreadyDecided: boolean,
    readonly pending: string[],
  ) {
    super(
      alreadyDecided ? 'ALREADY_DECIDED' : 'UNKNOWN_PLAN',
      alreadyDecided
        ? `planId: plan ${planId} was already approved or declined`
        : `planId: no plan ${planId} waits for a decision (pending: ${pending.length ? pending.join(', ') : 'none'})`,
    );
  }
}

/** What the model reads when its plan is approved: the plan itself, so the rest of the turn follows it. */
export function planApprovedText(plan: SessionPlan, mode: PermissionMode): string {
  const said = plan.note?.trim() ? ` The user said: ${plan.note.trim()}` : '';
  return (
    `The user approved your plan. The session is now in ${mode} mode` +
    (mode === 'execute' ? ': your tools run.' : mode === 'ask' ? ': write tools wait for the user\'s approval.' : ': write tools are still refused.') +
    `${said}\nFollow this plan:\n\n${plan.markdown}`
  );
}

/** What the model reads when its plan is declined (with the user's note). */
export function planDeclinedText(note?: string): string {
  const said = note?.trim() ? ` The user said: ${note.trim()}` : '';
  return `The user declined your plan, so nothing was changed and the session stays in explore mode.${said} Revise the plan and submit it again, or ask the user how to proceed.`;
}
