/**
 * The typed form of a flow: the graph a DOT file describes, as plain JSON (it is the flow workflow's
 * input). Nodes carry their kind and resolved attributes (subgraph defaults applied); edges carry the
 * routing attributes. `line` is where the element is in the DOT text, for errors.
 */
import { z } from 'zod';
import { lazySchema } from '../lazy-schema';

export const NODE_KINDS = ['start', 'exit', 'prompt', 'agent', 'command', 'gate', 'route', 'parallel', 'fan_in'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

export const FIDELITIES = ['full', 'compact', 'summary:high', 'summary:medium', 'summary:low', 'truncate'] as const;
export type Fidelity = (typeof FIDELITIES)[number];

export const JOIN_POLICIES = ['wait_all', 'first_success'] as const;
export type JoinPolicy = (typeof JOIN_POLICIES)[number];

export interface FlowNode {
  id: string;
  kind: NodeKind;
  label: string;
  /** prompt/agent nodes: the text sent (default: the label). */
  prompt?: string;
  /** agent nodes: the registered agent run as a child workflow. */
  agent?: string;
  /** command nodes: the shell command run in the sandbox. */
  script?: string;
  fidelity?: Fidelity;
  threadId?: string;
  model?: string;
  /** prompt nodes: the model connection its session runs on (default: the flow's, else 'anthropic'); `model` is an id within it. */
  connection?: string;
  /** Retries after a failed attempt (default 0). */
  maxRetries?: number;
  /** parallel nodes: how branches join, and how many run at once. */
  join?: JoinPolicy;
  maxParallel?: number;
  /** Every attribute as written (after subgraph defaults), for graph.{attr}-style reading and display. */
  attrs: Record<string, string>;
  line?: number;
}

export interface FlowEdge {
  from: string;
  to: string;
  label?: string;
  condition?: string;
  fidelity?: Fidelity;
  /** Gate edges: the accelerator key (from a `[K] Label` label, or the label's first letter). */
  key?: string;
  /** Gate edges: this choice takes free text. */
  freeform?: boolean;
  line?: number;
}

export interface FlowGraph {
  name: string;
  /** Graph attributes (goal, default_fidelity, …), mirrored into the context as graph.{attr}. */
  attrs: Record<string, string>;
  nodes: FlowNode[];
  edges: FlowEdge[];
}

const nodeSchema = lazySchema(() => z.object({
  id: z.string().min(1),
  kind: z.enum(NODE_KINDS),
  label: z.string(),
  prompt: z.string().optional(),
  agent: z.string().optional(),
  script: z.string().optional(),
  fidelity: z.enum(FIDELITIES).optional(),
  threadId: z.string().optional(),
  model: z.string().optional(),
  connection: z.string().optional(),
  maxRetries: z.number().int().min(0).optional(),
  join: z.enum(JOIN_POLICIES).optional(),
  maxParallel: z.number().int().min(1).optional(),
  attrs: z.record(z.string(), z.string()),
  line: z.number().int().optional(),
}));

const edgeSchema = lazySchema(() => z.object({
  from: z.string().min(1),
  to: z.string().min(1),
  label: z.string().optional(),
  condition: z.string().optional(),
  fidelity: z.enum(FIDELITIES).optional(),
  key: z.string().optional(),
  freeform: z.boolean().optional(),
  line: z.number().int().optional(),
}));

export const flowGraphSchema = lazySchema(() => z.object({
  name: z.string(),
  attrs: z.record(z.string(), z.string()),
  nodes: z.array(nodeSchema),
  edges: z.array(edgeSchema),
}));

export function nodeById(graph: FlowGraph, id: string): FlowNode | undefined {
  return graph.nodes.find((n) => n.id === id);
}

export function outgoing(graph: FlowGraph, id: string): FlowEdge[] {
  return graph.edges.filter((e) => e.from === id);
}

export function startNode(graph: FlowGraph): FlowNode {
  const start = graph.nodes.find((n) => n.kind === 'start');
  if (!start) throw new Error('flow has no start node (validation lets none through)');
  return start;
}

export function edgeName(e: Pick<FlowEdge, 'from' | 'to'>): string {
  return `edge ${e.from} -> ${e.to}`;
}
