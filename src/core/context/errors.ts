import { FabricError } from '../errors';

/** A hygiene function was called with options it cannot honour; names the option. */
export class InvalidToolResultOptionsError extends FabricError {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super('INVALID_TOOL_RESULT_OPTIONS', `Invalid tool-result option '${field}': ${detail}`);
  }
}
