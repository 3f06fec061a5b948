/**
 * A plan in `fh chat` (explore mode's submit_plan): the Markdown printed as plain text (control
 * characters removed: it is the model's output, and a terminal would act on escape sequences), and the
 * answer: `y` approves, `y ask` / `y execute` approves and switches the mode, `n` or Enter declines,
 * other text declines with it as the note.
 */
import type { SessionHandle } from '../../client/sessions';
import { PLAN_MODES, SUBMIT_PLAN_TOOL, type PlanMode } from '../../core/sessions/plans';

export const isPlanQuestion = (tool: string): boolean => tool === SUBMIT_PLAN_TOOL;

/** The plan's lines, indented, with every control character but tab removed. */
export function planLines(input: unknown): string[] {
  const plan = typeof (input as { plan?: unknown })?.plan === 'string' ? (input as { plan: string }).plan : JSON.stringify(input);
  // eslint-disable-next-line no-control-regex
  return ['plan submitted for your approval:', ...plan.split(/\r?\n/).map((l) => `  │ ${l.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')}`)];
}

export const PLAN_QUESTION = `? approve the plan? [y / y ${PLAN_MODES.join(' / y ')} / N / note]`;

export function parsePlanAnswer(line: string): { approved: boolean; mode?: PlanMode; note?: string } {
  const m = /^(y|yes)(?:\s+(ask|execute)\b)?(?:\s+(.*))?$/i.exec(line.trim());
  if (m) {
    const note = m[3]?.trim() || undefined;
    return { approved: true, ...(m[2] ? { mode: m[2].toLowerCase() as PlanMode } : {}), ...(note ? { note } : {}) };
  }
  return /^(n|no)?$/i.test(line.trim()) ? { approved: false } : { approved: false, note: line.trim() };
}

/** Sends the answer; returns the line the chat prints. */
export async function answerPlan(handle: SessionHandle, planId: string, line: string): Promise<string> {
  const a = parsePlanAnswer(line);
  if (a.approved) {
    const plan = await handle.approvePlan(planId, { ...(a.mode ? { mode: a.mode } : {}), ...(a.note ? { note: a.note } : {}) });
    return `  approved the plan${plan.mode ? `; the session is now in ${plan.mode} mode` : ''}`;
  }
  await handle.declinePlan(planId, a.note ? { note: a.note } : {});
  return `  declined the plan${a.note ? ` (${a.note})` : ''}`;
}
