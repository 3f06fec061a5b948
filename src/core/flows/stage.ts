/**
 * What one stage did, as the run keeps it: the preamble renders it, `fh flow show`/`history` list it,
 * and the query returns it. Handler details are per kind (model and tokens and files for agent nodes;
 * script, stdout and stderr for command nodes; the choice for gates; branches for fan-ins).
 */
import type { ContextValue, FlowContext } from './context';
import type { Fidelity, NodeKind } from './graph';

export type StageStatus = 'success' | 'fail';

export interface StageRecord {
  node: string;
  kind: NodeKind;
  /** 1 for the node's first visit, 2 for the second (a loop), … */
  visit: number;
  /** Attempts this visit took (1 = no retry). */
  attempts: number;
  status: StageStatus;
  fidelity?: Fidelity;
  threadId?: string;
  agent?: { model: string; inputTokens: number; outputTokens: number; files: string[] };
  command?: { script: string; exitCode: number | null; stdout: ContextValue; stderr: ContextValue };
  gate?: { selected: string; label: string; text?: string };
  branches?: Array<{ id: string; outcome: StageStatus | 'cancelled'; updates: FlowContext }>;
  failure?: { class: string; signature: string; detail: string };
  /** The context keys this stage's outcome set, in order. */
  updated: string[];
}

/** What a stage handler hands back before the engine turns it into context updates. */
export interface StageResult {
  status: StageStatus;
  updates: FlowContext;
  record: Omit<StageRecord, 'node' | 'kind' | 'visit' | 'attempts' | 'status' | 'updated' | 'fidelity' | 'threadId'>;
  /** A label to route by (gate choice, agent directive). */
  preferredLabel?: string;
}

/** Where command nodes' outputs go, inside the work dir (removed at the run's end). */
export const FLOW_OUTPUT_DIR = '.fh-flow';

/**
 * The bash command a command stage runs: the script with its output sent to `<base>.out` and
 * `<base>.err` (the tool caps what it returns, the files are whole). The paths are shell-quoted: a
 * node id is never read as shell (ids are also checked when the graph is, see validateFlow).
 */
export function commandStageShell(script: string, base: string): string {
  return `mkdir -p ${FLOW_OUTPUT_DIR} && { ${script}\n} > ${shellQuote(`${base}.out`)} 2> ${shellQuote(`${base}.err`)}`;
}

/** One shell word, whatever the text: single quotes, each `'` inside written as `'\''`. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}
