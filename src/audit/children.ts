/**
 * Sub-agents in an audit: a child workflow started by agentAsTool becomes one `sub_agent` record — the
 * child's id, agent and input, how it ended, its result, and its events nested under it (what the child
 * returned to its parent). The child's own history is audited on its own (`fh history <child id>`).
 */
import { failureText, toNumber } from './history-fields';
import { isSubAgentEnvelope } from '../wire/sub-agent';
import type { AgentEvent } from '../core/events';
import type { SubAgentRecord } from './records';
import type { Attributes, EventRef, HistoryEvent, Walk } from './walk';

export async function childStarted(w: Walk, a: Attributes<'startChildWorkflowExecutionInitiatedEventAttributes'>, ev: EventRef): Promise<void> {
  const [input] = await w.reader.values(a.input?.payloads);
  const rec = w.push<SubAgentRecord>({
    type: 'sub_agent',
    ...ev,
    childId: a.workflowId ?? '?',
    agent: a.workflowType?.name ?? '?',
    input: isSubAgentEnvelope(input) ? input.fhSubAgent.input : input,
    ...(isSubAgentEnvelope(input) ? { depth: input.fhSubAgent.depth } : {}),
    status: 'pending',
    events: [],
  });
  w.byScheduled.set(ev.eventId, rec);
}

/** Completed, failed, cancelled, timed out or terminated: the record of the child the event names. */
export async function childEnded(w: Walk, e: HistoryEvent): Promise<boolean> {
  const a =
    e.childWorkflowExecutionCompletedEventAttributes ??
    e.childWorkflowExecutionFailedEventAttributes ??
    e.childWorkflowExecutionCanceledEventAttributes ??
    e.childWorkflowExecutionTimedOutEventAttributes ??
    e.childWorkflowExecutionTerminatedEventAttributes;
  if (!a) return false;
  const rec = w.byScheduled.get(toNumber(a.initiatedEventId) ?? -1) as SubAgentRecord | undefined;
  if (!rec || rec.type !== 'sub_agent') return true;
  if (e.childWorkflowExecutionCompletedEventAttributes) {
    const [out] = await w.reader.values(e.childWorkflowExecutionCompletedEventAttributes.result?.payloads);
    rec.status = 'completed';
    const outcome = out as { result?: unknown; events?: AgentEvent[] } | undefined;
    rec.result = outcome && typeof outcome === 'object' && 'result' in outcome ? outcome.result : out;
    rec.events = Array.isArray(outcome?.events) ? outcome!.events : [];
  } else if (e.childWorkflowExecutionFailedEventAttributes) {
    rec.status = 'failed';
    const f = e.childWorkflowExecutionFailedEventAttributes.failure;
    rec.error = f ? failureText(f) : 'failed';
  } else if (e.childWorkflowExecutionCanceledEventAttributes) rec.status = 'canceled';
  else rec.status = e.childWorkflowExecutionTimedOutEventAttributes ? 'timed_out' : 'failed';
  return true;
}
