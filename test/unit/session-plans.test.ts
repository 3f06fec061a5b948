/**
 * The pure parts of plans: the decision schema (fields named), the tools a host offers beside the agent's,
 * and `fh chat`'s reading of an answer and printing of a plan (no control characters reach the terminal).
 */
import { z } from 'zod';
import { InvalidInputError } from '../../src/core/errors';
import { planDecisionSchema, submitPlanTool, planApprovedText, planDeclinedText, type SessionPlan } from '../../src/core/sessions/plans';
import { parseWith } from '../../src/core/validate';
import { withHostTools } from '../../src/core/conversation-tools';
import { toolSpec, tool } from '../../src/core/tools';
import { parsePlanAnswer, planLines } from '../../src/cli/chat/plans';

const decide = (v: unknown) => parseWith(planDecisionSchema, v, 'plan decision');

describe('plan decisions', () => {
  it('accepts an approval with a mode and a decline with a note', () => {
    expect(decide({ planId: 'p1', approved: true, mode: 'execute' })).toEqual({ planId: 'p1', approved: true, mode: 'execute' });
    expect(decide({ planId: 'p1', approved: false, note: 'no' })).toEqual({ planId: 'p1', approved: false, note: 'no' });
  });

  it.each([
    [{ planId: 'p1', approved: true, mode: 'explore' }, 'mode'],
    [{ planId: 'p1', approved: false, mode: 'ask' }, 'mode'],
    [{ planId: '', approved: true }, 'planId'],
    [{ planId: 'p1', approved: true, colour: 'red' }, ''],
  ])('refuses %j naming the field', (input, field) => {
    let err: unknown;
    try {
      decide(input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidInputError);
    if (field) expect((err as InvalidInputError).field).toBe(field);
  });

  it('tells the model the plan and the mode on approval, the note on decline', () => {
    const plan: SessionPlan = { id: 'p1', status: 'approved', markdown: '1. do it', messageId: 'm', submittedAt: 0, mode: 'execute', note: 'ok' };
    expect(planApprovedText(plan, 'execute')).toMatch(/approved your plan\. The session is now in execute mode: your tools run\. The user said: ok\nFollow this plan:\n\n1\. do it$/);
    expect(planDeclinedText('  smaller  ')).toContain('The user said: smaller Revise');
  });
});

describe('tools a host offers', () => {
  const read = tool({ name: 'read', description: 'r', input: z.object({}) });
  const specs = [toolSpec(read)];
  const byName = new Map([['read', read]]);

  it('are the same objects when the host offers none', () => {
    expect(withHostTools(specs, byName, undefined)).toEqual({ specs, byName });
    const none = withHostTools(specs, byName, () => []);
    expect(none.specs).toBe(specs);
    expect(none.byName).toBe(byName);
  });

  it('are added to the specs and the tools by name (an agent tool of the same name wins)', () => {
    const offered = withHostTools(specs, byName, () => [submitPlanTool]);
    expect(offered.specs.map((s) => s.name)).toEqual(['read', 'submit_plan']);
    expect(offered.byName.get('submit_plan')).toBe(submitPlanTool);
    expect(byName.has('submit_plan')).toBe(false);
    const mine = tool({ name: 'submit_plan', description: 'mine', input: z.object({}) });
    expect(withHostTools([toolSpec(mine)], new Map([['submit_plan', mine]]), () => [submitPlanTool]).byName.get('submit_plan')).toBe(mine);
  });
});

describe('fh chat and a plan', () => {
  it.each([
    ['y', { approved: true }],
    ['yes execute', { approved: true, mode: 'execute' }],
    ['y ask fine by me', { approved: true, mode: 'ask', note: 'fine by me' }],
    ['y looks good', { approved: true, note: 'looks good' }],
    ['', { approved: false }],
    ['n', { approved: false }],
    ['use a branch', { approved: false, note: 'use a branch' }],
  ])('reads %j', (line, expected) => {
    expect(parsePlanAnswer(line)).toEqual(expected);
  });

  it('prints the plan with control characters removed', () => {
    expect(planLines({ plan: '# T\x1b]0;x\x07\n\tcode\x9b2J' })).toEqual(['plan submitted for your approval:', '  │ # T]0;x', '  │ \tcode2J']);
  });
});
