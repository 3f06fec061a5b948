import { compactionExplicitlyDisabled, TEMPORAL_COMPACTION_WARNING, type Flavour, type InitOptions } from '../core/harness';

let warned = false;

/**
 * The default entry injects auto-compaction; on Temporal that is a run-time decision, so say so once
 * per process (process state: it lives on the Node side, not in core). Workflow code routes this through a sink, which keeps the once-ness
 * per worker process and out of replays.
 */
export function warnIfTemporalWithCompaction(flavour: Flavour, options: InitOptions, warn: (msg: string) => void = console.warn): void {
  if (warned || flavour !== 'default' || options.runtime !== 'temporal' || compactionExplicitlyDisabled(options)) return;
  warned = true;
  warn(TEMPORAL_COMPACTION_WARNING);
}
