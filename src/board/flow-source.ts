/**
 * The board's flow runs, behind one small interface (`BoardFlowSource`), beside the sessions' source:
 * the list from visibility (workflow type `fhFlow`; no query per run), one run's view from its state
 * query (src/board/flow-view.ts), its live events from the run's stream, and a gate answered through
 * the run's gate update (a refused answer is the typed error, and the gate keeps waiting).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { FabricError, InvalidInputError } from '../core/errors';
import { getFlowHandle } from '../client/flows';
import { FLOW_GATES_MEMO_KEY, FLOW_MEMO_KEY, FLOW_WORKFLOW, type GateDecision } from '../wire/flow-messages';
import { flowView, type FlowView } from './flow-view';
import type { BoardEnvelope } from './source';

/** One row of the board's flow list. */
export interface FlowRow {
  id: string;
  /** The graph's name (from the run's memo). */
  name: string;
  /** Temporal's status of the run: RUNNING, COMPLETED, FAILED, … */
  status: string;
  /** A running run's gates waiting for an answer (node ids, from its memo; runs before 0.6.4 never say). */
  waitingGates?: string[];
  startTime: string;
  closeTime?: string;
}

export interface GateBody {
  choice: string;
  text?: string;
  gate?: string;
}

export interface BoardFlowSource {
  listFlows(): Promise<FlowRow[]>;
  flowView(id: string): Promise<FlowView>;
  /** The run's stream events after `from` (all when absent), until the run ends or `signal` aborts. */
  subscribeFlow(id: string, from: string | undefined, signal: AbortSignal): AsyncIterable<BoardEnvelope>;
  gate(id: string, answer: GateBody): Promise<GateDecision>;
}

/** No flow run has this id in the board's namespace. */
export class FlowNotFoundError extends FabricError {
  constructor(readonly workflowId: string) {
    super('FLOW_NOT_FOUND', `No flow run '${workflowId}' in this namespace.`);
  }
}

const gateBodySchema = z
  .object({ choice: z.string().min(1).max(500), text: z.string().max(100_000).optional(), gate: z.string().min(1).max(500).optional() })
  .strict();

export function parseGateBody(body: unknown): GateBody {
  const r = gateBodySchema.safeParse(body);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ path: i.path.join('.') || (i.code === 'unrecognized_keys' ? i.keys[0]! : ''), message: i.message }));
  throw new InvalidInputError('gate answer', issues[0]!.path, issues);
}

const LIST_LIMIT = 200;

export function temporalFlowSource(client: Client): BoardFlowSource {
  const notFound = (id: string) => (err: unknown) => {
    throw err instanceof WorkflowNotFoundError ? new FlowNotFoundError(id) : err;
  };
  return {
    async listFlows() {
      const rows: FlowRow[] = [];
      for await (const wf of client.workflow.list({ query: `WorkflowType = '${FLOW_WORKFLOW}'` })) {
        const name = wf.memo?.[FLOW_MEMO_KEY];
        const gates = wf.memo?.[FLOW_GATES_MEMO_KEY];
        const waiting = wf.status.name === 'RUNNING' && Array.isArray(gates) ? gates.filter((g): g is string => typeof g === 'string') : [];
        rows.push({
          id: wf.workflowId,
          name: typeof name === 'string' ? name : wf.workflowId,
          status: wf.status.name,
          ...(waiting.length > 0 ? { waitingGates: waiting } : {}),
          startTime: wf.startTime.toISOString(),
          ...(wf.closeTime ? { closeTime: wf.closeTime.toISOString() } : {}),
        });
        if (rows.length >= LIST_LIMIT * 5) break;
      }
      // Visibility on SQL has no ORDER BY: the newest first, here.
      return rows.sort((a, b) => b.startTime.localeCompare(a.startTime)).slice(0, LIST_LIMIT);
    },

    async flowView(id) {
      const state = await getFlowHandle(client, id).state().catch(notFound(id));
      return flowView(id, state);
    },

    async *subscribeFlow(id, from, signal) {
      const last = from !== undefined && /^\d+$/.test(from) ? Number(from) : undefined;
      try {
        for await (const env of getFlowHandle(client, id).stream({ ...(last !== undefined ? { from: last + 1 } : {}), signal })) {
          yield { offset: String(env.offset), event: { type: env.event.type, data: env.event as unknown as Record<string, unknown> } };
        }
      } catch (err) {
        if (signal.aborted) return;
        notFound(id)(err);
      }
    },

    gate(id, answer) {
      const { choice, ...rest } = answer;
      return getFlowHandle(client, id).gate(choice, rest).catch(notFound(id));
    },
  };
}
