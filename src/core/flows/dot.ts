/**
 * DOT text -> typed FlowGraph, with @ts-graphviz/ast (a maintained DOT parser that keeps each
 * element's line). Applies `node [...]`/`edge [...]` defaults by scope (a subgraph's defaults end with
 * it), refuses attributes this engine does not know, and decides each node's kind. Structural checks
 * (reachability, conditions, gates) are validate.ts's; parseFlow runs both.
 */
import { connectionNameSchema } from '../connection-name';
import { parse, type ASTNode } from '@ts-graphviz/ast';
import { FIDELITIES, JOIN_POLICIES, NODE_KINDS, type Fidelity, type FlowEdge, type FlowGraph, type FlowNode, type JoinPolicy, type NodeKind } from './graph';
import { FlowSyntaxError, InvalidFlowError } from './errors';
import { validateFlow } from './validate';

/** Layout attributes Graphviz draws with: accepted on nodes and edges, no effect on the run. */
const COSMETIC = ['shape', 'color', 'fillcolor', 'style', 'fontname', 'fontsize', 'fontcolor', 'penwidth', 'tooltip', 'class', 'xlabel', 'width', 'height', 'group', 'peripheries', 'margin', 'fixedsize'];
const NODE_ATTRS = new Set([...COSMETIC, 'label', 'type', 'prompt', 'agent', 'script', 'command', 'fidelity', 'thread_id', 'model', 'connection', 'max_retries', 'join', 'max_parallel', 'input']);
const EDGE_ATTRS = new Set([...COSMETIC, 'label', 'condition', 'fidelity', 'freeform', 'weight', 'arrowhead', 'arrowtail', 'dir', 'constraint', 'minlen', 'headport', 'tailport']);

const SHAPE_KINDS: Record<string, NodeKind> = {
  Mdiamond: 'start',
  Msquare: 'exit',
  hexagon: 'gate',
  parallelogram: 'command',
  diamond: 'route',
  component: 'parallel',
  tripleoctagon: 'fan_in',
};

type Attrs = Record<string, string>;
interface Scope {
  node: Attrs;
  edge: Attrs;
}
interface RawNode {
  id: string;
  attrs: Attrs;
  declared: boolean;
  line?: number;
}

/** Parses and validates a flow: the typed graph, or a FlowSyntaxError / InvalidFlowError naming the element and line. */
export function parseFlow(dot: string): FlowGraph {
  const graph = dotToGraph(dot);
  validateFlow(graph);
  return graph;
}

/** DOT -> FlowGraph without the structural checks. */
export function dotToGraph(dot: string): FlowGraph {
  let ast: ASTNode;
  try {
    ast = parse(dot);
  } catch (err) {
    const loc = (err as { cause?: { location?: { start?: { line: number; column: number } } } }).cause?.location?.start;
    throw new FlowSyntaxError(err instanceof Error ? err.message : String(err), loc?.line, loc?.column);
  }
  const graphs = (ast.children as ASTNode[]).filter((c) => c.type === 'Graph');
  if (graphs.length !== 1) throw new FlowSyntaxError(`expected exactly one graph, found ${graphs.length}`);
  const root = graphs[0] as ASTNode & { directed?: boolean; id?: { value: string } };
  if (root.directed === false) throw new FlowSyntaxError("a flow is a 'digraph', not a 'graph'", lineOf(root));
  const graphAttrs: Attrs = {};
  const nodes = new Map<string, RawNode>();
  const edges: Array<{ from: string; to: string; attrs: Attrs; line?: number }> = [];

  const touch = (id: string, scope: Scope, line: number | undefined, declared: boolean, own: Attrs): void => {
    let n = nodes.get(id);
    if (!n) {
      n = { id, attrs: { ...scope.node }, declared: false, line };
      nodes.set(id, n);
    }
    if (declared) {
      if (!n.declared) n.line = line;
      n.declared = true;
    }
    Object.assign(n.attrs, own);
  };

  const targetsOf = (t: ASTNode, scope: Scope): string[] => {
    if (t.type === 'NodeRef') return [(t as unknown as { id: { value: string } }).id.value];
    if (t.type === 'NodeRefGroup') return (t.children as ASTNode[]).flatMap((c) => targetsOf(c, scope));
    if (t.type === 'Subgraph') return walk(t.children as ASTNode[], { node: { ...scope.node }, edge: { ...scope.edge } });
    return [];
  };

  /** Walks statements; returns the node ids mentioned (a subgraph used as an edge end stands for them). */
  function walk(stmts: ASTNode[], scope: Scope): string[] {
    const mentioned: string[] = [];
    for (const s of stmts) {
      const line = lineOf(s);
      switch (s.type) {
        case 'Attribute': {
          const [k, v] = attrOf(s);
          if (scope === rootScope) graphAttrs[k] = v; // graph-level `key=value`; in a subgraph: cosmetic
          break;
        }
        case 'AttributeList': {
          const kind = (s as unknown as { kind: 'Graph' | 'Node' | 'Edge' }).kind;
          const attrs = attrsOf(s);
          if (kind === 'Graph') {
            if (scope === rootScope) Object.assign(graphAttrs, attrs);
          } else {
            checkAttrs(attrs, kind === 'Node' ? NODE_ATTRS : EDGE_ATTRS, `${kind.toLowerCase()} defaults`, line);
            Object.assign(kind === 'Node' ? scope.node : scope.edge, attrs);
          }
          break;
        }
        case 'Node': {
          const id = (s as unknown as { id: { value: string } }).id.value;
          const attrs = attrsOf(s);
          checkAttrs(attrs, NODE_ATTRS, `node ${id}`, line);
          touch(id, scope, line, true, attrs);
          mentioned.push(id);
          break;
        }
        case 'Edge': {
          const attrs = { ...scope.edge, ...attrsOf(s) };
          const ends = ((s as unknown as { targets: ASTNode[] }).targets).map((t) => targetsOf(t, scope));
          for (const group of ends) for (const id of group) if (!nodes.has(id)) touch(id, scope, line, false, {});
          for (let i = 0; i + 1 < ends.length; i++) {
            for (const from of ends[i]!) for (const to of ends[i + 1]!) {
              checkAttrs(attrs, EDGE_ATTRS, `edge ${from} -> ${to}`, line);
              edges.push({ from, to, attrs, line });
            }
          }
          mentioned.push(...ends.flat());
          break;
        }
        case 'Subgraph':
          mentioned.push(...walk(s.children as ASTNode[], { node: { ...scope.node }, edge: { ...scope.edge } }));
          break;
        default:
          break; // comments
      }
    }
    return mentioned;
  }
  const rootScope: Scope = { node: {}, edge: {} };
  walk(root.children as ASTNode[], rootScope);

  return {
    name: root.id?.value ?? 'flow',
    attrs: graphAttrs,
    nodes: [...nodes.values()].map(toNode),
    edges: edges.map(toEdge),
  };
}

function toNode(raw: RawNode): FlowNode {
  const a = raw.attrs;
  const where = `node ${raw.id}`;
  const kind = nodeKind(raw);
  const node: FlowNode = { id: raw.id, kind, label: a.label ?? raw.id, attrs: { ...a } };
  if (raw.line !== undefined) node.line = raw.line;
  if (!raw.declared && !['start', 'exit'].includes(kind)) {
    throw new InvalidFlowError(where, `unknown node: an edge uses it but it is never declared (declare it with its label or prompt)`, raw.line);
  }
  if (a.prompt !== undefined) node.prompt = a.prompt;
  if (a.agent !== undefined) node.agent = a.agent;
  const script = a.script ?? a.command;
  if (script !== undefined) node.script = script;
  if (a.fidelity !== undefined) node.fidelity = fidelityOf(a.fidelity, where, raw.line);
  if (a.thread_id !== undefined) node.threadId = a.thread_id;
  if (a.model !== undefined) node.model = a.model;
  if (a.connection !== undefined) {
    if (!connectionNameSchema.safeParse(a.connection).success) throw new InvalidFlowError(where, `connection '${a.connection}' is not a connection name (letters, digits, _ . -)`, raw.line);
    node.connection = a.connection;
  }
  if (a.max_retries !== undefined) node.maxRetries = intOf(a.max_retries, 'max_retries', where, raw.line, 0);
  if (a.join !== undefined) {
    if (!(JOIN_POLICIES as readonly string[]).includes(a.join)) throw new InvalidFlowError(where, `join '${a.join}' is not one of ${JOIN_POLICIES.join(', ')}`, raw.line);
    node.join = a.join as JoinPolicy;
  }
  if (a.max_parallel !== undefined) node.maxParallel = intOf(a.max_parallel, 'max_parallel', where, raw.line, 1);
  return node;
}

function toEdge(raw: { from: string; to: string; attrs: Attrs; line?: number }): FlowEdge {
  const a = raw.attrs;
  const edge: FlowEdge = { from: raw.from, to: raw.to };
  const where = `edge ${raw.from} -> ${raw.to}`;
  if (raw.line !== undefined) edge.line = raw.line;
  if (a.label !== undefined) {
    edge.label = a.label;
    const m = /^\s*\[([A-Za-z0-9])\]/.exec(a.label);
    edge.key = (m ? m[1]! : (/[A-Za-z0-9]/.exec(a.label)?.[0] ?? '')).toUpperCase();
  }
  if (a.condition !== undefined) edge.condition = a.condition;
  if (a.fidelity !== undefined) edge.fidelity = fidelityOf(a.fidelity, where, raw.line);
  if (a.freeform !== undefined) edge.freeform = a.freeform === 'true';
  return edge;
}

function nodeKind(raw: RawNode): NodeKind {
  const a = raw.attrs;
  if (a.type !== undefined) {
    if (!(NODE_KINDS as readonly string[]).includes(a.type)) {
      throw new InvalidFlowError(`node ${raw.id}`, `type '${a.type}' is not one of ${NODE_KINDS.join(', ')}`, raw.line);
    }
    return a.type as NodeKind;
  }
  if (a.shape && SHAPE_KINDS[a.shape]) return SHAPE_KINDS[a.shape]!;
  if (a.script !== undefined || a.command !== undefined) return 'command';
  if (a.agent !== undefined) return 'agent';
  const id = raw.id.toLowerCase();
  if (id === 'start') return 'start';
  if (id === 'exit' || id === 'end' || id === 'done') return 'exit';
  return 'prompt';
}

function fidelityOf(v: string, where: string, line?: number): Fidelity {
  if (!(FIDELITIES as readonly string[]).includes(v)) throw new InvalidFlowError(where, `fidelity '${v}' is not one of ${FIDELITIES.join(', ')}`, line);
  return v as Fidelity;
}

function intOf(v: string, name: string, where: string, line: number | undefined, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new InvalidFlowError(where, `${name} '${v}' is not an integer >= ${min}`, line);
  return n;
}

function checkAttrs(attrs: Attrs, allowed: Set<string>, where: string, line?: number): void {
  for (const k of Object.keys(attrs)) {
    if (!allowed.has(k)) throw new InvalidFlowError(where, `unknown attribute '${k}' (known: ${[...allowed].filter((x) => !COSMETIC.includes(x)).join(', ')}, and Graphviz layout attributes)`, line);
  }
}

function attrOf(s: ASTNode): [string, string] {
  const a = s as unknown as { key: { value: string }; value: { value: string } };
  return [a.key.value, a.value.value];
}

function attrsOf(s: ASTNode): Attrs {
  const out: Attrs = {};
  for (const c of s.children as ASTNode[]) if (c.type === 'Attribute') {
    const [k, v] = attrOf(c);
    out[k] = v;
  }
  return out;
}

function lineOf(s: ASTNode): number | undefined {
  return (s as unknown as { location?: { start?: { line: number } } }).location?.start?.line;
}
