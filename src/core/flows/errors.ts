/**
 * Typed errors of flows. Plain classes (no Node or Temporal APIs): workflow code throws them, the wire
 * codec carries their code and fields to clients, and the CLI prints them.
 */
import { FabricError } from '../errors';

/** Where in the DOT text something is (1-based line), when the graph came from DOT. */
export interface FlowLocation {
  line?: number;
}

function at(loc: FlowLocation | undefined): string {
  return loc?.line !== undefined ? ` (line ${loc.line})` : '';
}

/** The DOT text does not parse. */
export class FlowSyntaxError extends FabricError {
  declare readonly code: 'FLOW_DOT_SYNTAX';
  constructor(
    readonly problem: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super('FLOW_DOT_SYNTAX', `The flow's DOT does not parse${line !== undefined ? ` at line ${line}, column ${column}` : ''}: ${problem}`);
  }
}

/**
 * The graph parses but cannot run: an unknown node or attribute, an exit that cannot be reached, a
 * condition that does not parse. `element` names the node (`plan`) or edge (`plan -> test`).
 */
export class InvalidFlowError extends FabricError {
  declare readonly code: 'FLOW_INVALID';
  constructor(
    readonly element: string,
    readonly problem: string,
    readonly line?: number,
  ) {
    super('FLOW_INVALID', `Invalid flow: ${element}${at({ line })}: ${problem}`);
  }
}

/** An edge condition that does not parse (also raised by validation, with the edge and line). */
export class FlowConditionError extends FabricError {
  declare readonly code: 'FLOW_CONDITION';
  constructor(
    readonly condition: string,
    readonly problem: string,
  ) {
    super('FLOW_CONDITION', `Condition '${condition}' does not parse: ${problem}`);
  }
}

/** A gate answered with a choice it does not offer: the gate keeps waiting. */
export class UnknownGateChoiceError extends FabricError {
  declare readonly code: 'FLOW_UNKNOWN_CHOICE';
  readonly field = 'choice';
  constructor(
    readonly gate: string,
    readonly choice: string,
    readonly choices: string[],
  ) {
    super('FLOW_UNKNOWN_CHOICE', `Gate '${gate}' has no choice '${choice}'. Choices: ${choices.join(', ')}.`);
  }
}

/**
 * A gate answer sent when the run waits at no gate (or at another one than named), or when the run has
 * ended (`ended`: its id and status, e.g. completed, failed, terminated).
 */
export class FlowNotWaitingError extends FabricError {
  declare readonly code: 'FLOW_NOT_WAITING';
  constructor(
    readonly gate: string | undefined,
    readonly waitingAt: string | undefined,
    readonly ended?: { workflowId: string; status: string },
  ) {
    super(
      'FLOW_NOT_WAITING',
      ended
        ? `Flow run '${ended.workflowId}' has ended (${ended.status}): it waits at no gate.`
        : waitingAt === undefined
          ? 'The flow is not waiting at a gate.'
          : `The flow waits at gate '${waitingAt}', not '${gate}'.`,
    );
  }
}

/** `--set` (or initial context) naming a key the engine owns. */
export class ReservedContextKeyError extends FabricError {
  declare readonly code: 'FLOW_RESERVED_KEY';
  readonly field = 'context';
  constructor(readonly key: string) {
    super('FLOW_RESERVED_KEY', `Context key '${key}' is set by the engine and cannot be given: choose a key outside internal., graph., current_node, outcome, …`);
  }
}

/** A stage failed and no edge handles the failure: the run fails here (resume starts from this stage). */
export class FlowStageFailedError extends FabricError {
  declare readonly code: 'FLOW_STAGE_FAILED';
  constructor(
    readonly node: string,
    readonly failureClass: string,
    readonly detail: string,
  ) {
    super('FLOW_STAGE_FAILED', `Stage '${node}' failed (${failureClass}) and no edge handles the failure: ${detail}`);
  }
}

/** A loop ran past the run's step limit (graph attribute max_steps). */
export class FlowStepLimitError extends FabricError {
  declare readonly code: 'FLOW_STEP_LIMIT';
  constructor(readonly limit: number, readonly node: string) {
    super('FLOW_STEP_LIMIT', `The flow ran ${limit} stages without reaching an exit (at '${node}'); bound the loop with a condition on internal.node_visit_count or raise max_steps.`);
  }
}

/** No outgoing edge's condition matched, and there is no unconditioned edge to fall back on. */
export class FlowNoRouteError extends FabricError {
  declare readonly code: 'FLOW_NO_ROUTE';
  constructor(readonly node: string, readonly outcome: string) {
    super('FLOW_NO_ROUTE', `No edge out of '${node}' matches (outcome ${outcome}) and none is unconditioned.`);
  }
}

/** A gate answer that names no gate (or branch) while gates wait in more than one place. */
export class FlowGateAmbiguousError extends FabricError {
  declare readonly code: 'FLOW_GATE_AMBIGUOUS';
  constructor(readonly waiting: string[]) {
    super('FLOW_GATE_AMBIGUOUS', `Gates wait in more than one place (${waiting.join(', ')}): name the gate or the branch.`);
  }
}
