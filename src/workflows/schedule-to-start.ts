import { TimeoutType } from '@temporalio/common';

/** An activity that no worker started in time (no TimeoutFailure import: the chain is read by shape). */
export function isScheduleToStartTimeout(err: unknown): boolean {
  for (let cur = err as { cause?: unknown; timeoutType?: unknown } | undefined, depth = 0; cur && depth < 5; depth++) {
    if (cur.timeoutType === TimeoutType.SCHEDULE_TO_START) return true;
    cur = cur.cause as typeof cur;
  }
  return false;
}
