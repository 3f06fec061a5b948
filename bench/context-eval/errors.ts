import { FabricError } from '../../src/core/errors';

/** The evaluation was given options it cannot run with; names the option. */
export class InvalidEvalOptionsError extends FabricError {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super('INVALID_EVAL_OPTIONS', `Invalid evaluation option '${field}': ${detail}`);
  }
}
