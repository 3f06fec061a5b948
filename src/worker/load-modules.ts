import * as path from 'node:path';
import { FabricError } from '../core/errors';

/** A module given by path (agents, tools) could not be found or loaded. */
export class ModuleLoadError extends FabricError {
  constructor(
    readonly file: string,
    readonly reason: 'not_found' | 'failed',
    message: string,
  ) {
    super('MODULE_LOAD_FAILED', message);
  }
}

const TYPESCRIPT = /\.(c|m)?tsx?$/;

/**
 * Requires a user module in this (Node) process: the worker loads agent and tool modules to collect
 * tool implementations, next to bundling the agents as workflow code.
 */
export function loadModule(file: string, what: 'agents' | 'tools'): unknown {
  let resolved: string;
  try {
    resolved = require.resolve(path.resolve(file));
  } catch {
    throw new ModuleLoadError(file, 'not_found', `${what} module ${file} not found; check the path (it is resolved from ${process.cwd()})`);
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(resolved);
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    const unparsed = err instanceof SyntaxError || (err as NodeJS.ErrnoException)?.code === 'ERR_UNKNOWN_FILE_EXTENSION';
    const hint = TYPESCRIPT.test(resolved) && unparsed
      ? '. Node cannot load TypeScript by itself: install tsx in your project (npm i -D tsx; `fh worker` then uses it), ' +
        "preload a loader (NODE_OPTIONS='--import tsx'), or compile the module to JavaScript"
      : '';
    throw new ModuleLoadError(file, 'failed', `cannot load ${what} module ${file}: ${message}${hint}`);
  }
}

/** Module paths as given, or their exports when they are paths. */
export function loadSources<T>(values: ReadonlyArray<T | string>, what: 'agents' | 'tools'): unknown[] {
  return values.map((v) => (typeof v === 'string' ? loadModule(v, what) : v));
}
