/**
 * A memo key kept equal to a list the workflow holds, so a list of workflows shows it without a query
 * per workflow (a flow's waiting gates, a session's calls waiting for approval).
 */
import { patched, upsertMemo, workflowInfo } from '@temporalio/workflow';

/**
 * Returns a function that upserts `key` with the list it is given when the list differs from what the
 * memo holds (a memo upsert is a history event: none for an unchanged list), removes the key for an empty
 * list, and does nothing in runs recorded before `patch`, so their histories replay. What the memo holds
 * at first is what this run started with (a continue-as-new can carry the key).
 */
export function memoMirror<T>(key: string, patch: string): (list: readonly T[]) => void {
  let holds: string | undefined;
  return (list) => {
    const now = JSON.stringify(list);
    holds ??= JSON.stringify(workflowInfo().memo?.[key] ?? []);
    if (now === holds || !patched(patch)) return;
    holds = now;
    upsertMemo({ [key]: list.length > 0 ? list : null });
  };
}
