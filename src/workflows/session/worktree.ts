/**
 * A child session's own working copy (isolation 'worktree'): its first run makes a `git worktree` of
 * the working directory it was started with, on a branch of its own, and its tools run there (it is
 * their sandbox root); the record carries it across continue-as-new and shows it in `info()`. Ending
 * the session commits what changed on the branch and removes the worktree (the branch stays unless
 * the end asks otherwise). Only sessions started with isolation schedule these activities: histories
 * recorded before it never reach them.
 */
import { condition, workflowInfo } from '@temporalio/workflow';
import type { Session } from '../../core/conversation';
import type { EndSessionRequest, SessionWorktree } from '../../wire/session-messages';
import type { SessionCore } from './core';

/** Makes the worktree on the session's first run and moves the conversation's working directory into it. */
export async function openWorktree(s: SessionCore, session: Session): Promise<void> {
  if (s.start.isolation !== 'worktree' || s.record.worktree) return;
  const origin = session.cwd;
  const wt = await s.acts.fhWorktreeCreate({ cwd: origin, name: `session-${workflowInfo().workflowId}` });
  s.record.worktree = { branch: wt.branch, path: wt.path, root: wt.root, base: wt.base, origin };
  s.record.settings.workingDirectory = wt.path;
  session.changeWorkingDirectory(wt.path);
}

/** How the session is being ended (set by the end update; the serving loop reads it once it stops). */
export interface WorktreeEnding {
  request: EndSessionRequest;
  done: boolean;
}

/** The end update's wait: until the serving loop has removed the worktree (at once without one). */
export async function worktreeAfterEnd(s: SessionCore, ending: WorktreeEnding): Promise<{ worktree?: SessionWorktree } | void> {
  if (!s.record.worktree) return;
  await condition(() => ending.done);
  return { worktree: { ...s.record.worktree } };
}

/** After the serving loop: commit and remove the worktree (unless kept), once. */
export async function closeWorktree(s: SessionCore, ending: WorktreeEnding): Promise<void> {
  const wt = s.record.worktree;
  try {
    if (!wt || wt.removed || ending.request.keepWorktree) return;
    const done = await s.acts.fhWorktreeFinish({ path: wt.path, root: wt.root, branch: wt.branch, base: wt.base, cwd: wt.origin, ...(ending.request.deleteBranch ? { deleteBranch: true } : {}) });
    s.record.worktree = { ...wt, removed: true, ...(done.commit ? { commit: done.commit } : {}), ...(done.branchDeleted ? { branchDeleted: true } : {}) };
  } finally {
    ending.done = true;
  }
}
