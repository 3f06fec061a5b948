/**
 * A flow run's audit from its Temporal history alone (no worker, no query): each stage's context
 * updates as the fhFlowCommit activity recorded them (node, visit, attempt), each gate answer as the
 * update that was accepted, and each branch as the child workflow it started.
 */
import type { temporal } from '@temporalio/proto';
import type { FlowCommitInput } from '../wire/flow-activity-contract';
import type { FlowContext } from '../core/flows/context';
import { PayloadReader, type PayloadSources } from './payloads';

type History = temporal.api.history.v1.IHistory;

export type FlowAuditEntry =
  | { kind: 'stage'; eventId: string; time?: string; node: string; visit: number; attempt: number; updates: FlowContext }
  | { kind: 'gate'; eventId: string; time?: string; answer: unknown }
  | { kind: 'branch'; eventId: string; time?: string; workflowId: string };

export async function flowAudit(history: History, sources: PayloadSources = {}): Promise<FlowAuditEntry[]> {
  const reader = new PayloadReader(sources);
  const out: FlowAuditEntry[] = [];
  for (const e of history.events ?? []) {
    const eventId = String(e.eventId ?? '');
    const time = e.eventTime?.seconds !== undefined && e.eventTime.seconds !== null ? new Date(Number(e.eventTime.seconds) * 1000).toISOString() : undefined;
    const at = time !== undefined ? { eventId, time } : { eventId };
    const act = e.activityTaskScheduledEventAttributes;
    if (act?.activityType?.name === 'fhFlowCommit') {
      const input = (await reader.value(act.input?.payloads?.[0])) as FlowCommitInput;
      out.push({ kind: 'stage', ...at, node: input.node, visit: input.visit, attempt: input.attempt, updates: input.updates });
    }
    const upd = e.workflowExecutionUpdateAcceptedEventAttributes;
    if (upd?.acceptedRequest?.input?.name === 'fh.flow.gate') {
      out.push({ kind: 'gate', ...at, answer: await reader.value(upd.acceptedRequest.input.args?.payloads?.[0]) });
    }
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (child?.workflowType?.name === 'fhFlowBranch') out.push({ kind: 'branch', ...at, workflowId: child.workflowId ?? '' });
  }
  return out;
}
