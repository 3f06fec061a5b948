import type { Sinks } from '@temporalio/workflow';
import type { AgentEvent } from '../core/events';

/**
 * How workflow code reaches the worker process: events for `onEvent`, and the once-per-process
 * warning. Sinks are not called during replay, so nothing is emitted twice.
 */
export interface FabricSinks extends Sinks {
  fabric: {
    event(event: AgentEvent): void;
    warnOnce(key: string, message: string): void;
  };
}
