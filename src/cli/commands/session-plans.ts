/**
 * fh session plans / approve-plan / decline-plan: the plans a session in explore mode submits
 * (submit_plan). A plan waits like an approval; approving it may switch the session to ask or execute.
 * The plan is the model's Markdown: printed as text, never interpreted.
 */
import type { SessionHandle } from '../../client/sessions';
import { PLAN_MODES, type PlanMode, type SessionPlan } from '../../core/sessions/plans';
import { str, type Parsed } from '../args';
import type { Command, Io } from '../context';
import { usage } from '../errors';
import { args, handleOf, NOTE_OPTION, out, sub, withClient } from '../session-command-kit';

/** One line per plan: id, status, when, the mode it switched to, and its first line. */
export function planLine(plan: SessionPlan): string {
  const first = plan.markdown.split('\n').find((l) => l.trim()) ?? '';
  const extra = [plan.mode ? `→ ${plan.mode}` : '', plan.note ? `note: ${plan.note}` : ''].filter(Boolean).join('; ');
  return `${plan.id}  ${plan.status.padEnd(8)}  ${new Date(plan.submittedAt).toISOString()}  ${first.slice(0, 80)}${extra ? `  (${extra})` : ''}`;
}

const plansCommand = sub('plans', {
  summary: 'list the plans a session kept (submitted in explore mode), or print one whole',
  usage: 'plans <id> [<planId>]',
  description: 'Without <planId>: one line per plan (pending, approved or declined). With it: the plan\'s Markdown, as text.',
  examples: ['fh session plans triage-7', 'fh session plans triage-7 toolu_01AbC', 'fh session plans triage-7 --json'],
  run: async (p, io) => {
    const { named, rest } = args(p, 'session plans', ['id'], { rest: 'planId' });
    if (rest.length > 1) throw usage(`unexpected argument '${rest[1]}' (fh session plans <id> [<planId>])`);
    return withClient(p, async (conn) => {
      const plans = await handleOf(conn, named[0]!).plans();
      if (rest[0] === undefined) return out(io, p, plans, plans.length ? plans.map(planLine).join('\n') : `session ${named[0]} has no plans`);
      const plan = plans.find((x) => x.id === rest[0]);
      if (!plan) throw usage(`planId: session ${named[0]} has no plan ${rest[0]} (fh session plans ${named[0]} lists them)`);
      return out(io, p, plan, `${planLine(plan)}\n\n${plan.markdown}`);
    });
  },
});

/** The one pending plan when none is named (several: listed, exit 2). */
async function pendingPlanId(s: SessionHandle, io: Io, verb: string): Promise<string> {
  const pending = (await s.plans()).filter((x) => x.status === 'pending');
  if (pending.length === 1) return pending[0]!.id;
  if (pending.length > 1) io.err(pending.map((x) => `  ${planLine(x)}`).join('\n'));
  throw usage(pending.length === 0 ? `session ${s.id} has no plan waiting for a decision` : `session ${s.id} has ${pending.length} plans waiting (listed above): name one, fh session ${verb} ${s.id} <planId>`);
}

function planDecisionCommand(approved: boolean): Command {
  const verb = approved ? 'approve-plan' : 'decline-plan';
  return sub(verb, {
    summary: approved ? 'approve a plan, optionally switching the session to ask or execute' : 'decline a plan; the model reads your note',
    usage: `${verb} <id> [<planId>]${approved ? ' [--mode ask|execute]' : ''} [--note <text>]`,
    description: approved
      ? 'Without <planId>: the one pending plan. The model reads the approved plan and follows it; --mode switches the\nsession before its next tool calls (without it the session stays in explore mode).'
      : 'Without <planId>: the one pending plan. The session stays in explore mode; the model reads the note.',
    options: approved ? { ...NOTE_OPTION, mode: { type: 'string', value: '<mode>', help: `switch the session to: ${PLAN_MODES.join(', ')}` } } : NOTE_OPTION,
    examples: approved ? [`fh session ${verb} triage-7 --mode execute`, `fh session ${verb} triage-7 toolu_01AbC --mode ask`] : [`fh session ${verb} triage-7 --note 'keep the old API'`],
    run: async (p: Parsed, io: Io) => {
      const { named, rest } = args(p, `session ${verb}`, ['id'], { rest: 'planId' });
      if (rest.length > 1) throw usage(`unexpected argument '${rest[1]}' (fh session ${verb} <id> [<planId>])`);
      const note = str(p, 'note');
      const mode = approved ? str(p, 'mode') : undefined;
      if (mode !== undefined && !(PLAN_MODES as readonly string[]).includes(mode)) throw usage(`--mode must be one of ${PLAN_MODES.join(', ')}; got '${mode}'`);
      return withClient(
        p,
        async (conn) => {
          const s = handleOf(conn, named[0]!);
          const planId = rest[0] ?? (await pendingPlanId(s, io, verb));
          const opts = { ...(note !== undefined ? { note } : {}), ...(mode !== undefined ? { mode: mode as PlanMode } : {}) };
          const plan = approved ? await s.approvePlan(planId, opts) : await s.declinePlan(planId, opts);
          return out(io, p, { id: s.id, plan }, `${approved ? 'approved' : 'declined'} plan ${planId}${plan.mode ? `; the session is now in ${plan.mode} mode` : ''}`);
        },
        true,
        { needsWorkerFor: named[0]! },
      );
    },
  });
}

export const planCommands: Command[] = [plansCommand, planDecisionCommand(true), planDecisionCommand(false)];
