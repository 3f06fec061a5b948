/**
 * Flow activities, on the worker. A stage's updates pass through fhFlowCommit: its input is the
 * update's record in history, and a value over the threshold is stored where tool outputs are (so an
 * agent reads it back with read_artifact) and answered as a pointer.
 */
import { Context } from '@temporalio/activity';
import { artifactPointer, oversizedKeys, serializedBytes } from '../core/flows/context';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FLOW_OUTPUT_DIR } from '../core/flows/stage';
import { encodeFailure } from '../wire/failures';
import type { FlowActivities } from '../wire/flow-activity-contract';
import type { TranscriptStore } from './stores/transcript-store';
import { ToolResultStore } from './stores/tool-results';
import { activityOwner, createWorktree, finishWorktree, isGitWorkTree, snapshotCommit } from './git/worktrees';
import { heartbeating } from './heartbeat';

export function createFlowActivities(store: TranscriptStore): FlowActivities {
  const values = new ToolResultStore(store);
  return {
    async fhFlowCommit(input) {
      const offloaded: Record<string, string> = {};
      // It heartbeats (the workflow sets a heartbeat timeout): a worker that dies mid-commit is noticed
      // in seconds and the commit retried elsewhere, instead of after the whole start-to-close timeout.
      Context.current().heartbeat();
      try {
        await heartbeating(async () => {
          for (const key of oversizedKeys(input.updates, input.offloadBytes)) {
            const v = input.updates[key]!;
            // Text is stored as itself (read back readable); anything else as its JSON.
            const text = typeof v === 'string' ? v : JSON.stringify(v);
            const ref = await values.save(text);
            if (ref !== undefined) offloaded[key] = artifactPointer(ref, serializedBytes(v));
          }
        });
      } catch (err) {
        throw encodeFailure(err);
      }
      return { offloaded };
    },

    // The work-dir activities run git (a worktree of a large repository takes a while) and heartbeat.
    async fhFlowBranchWorkDir({ workDir, name }) {
      const owner = activityOwner(Context.current().info); // this branch workflow's run: a resumed run's branch is another
      try {
        return await heartbeating(async () => {
          if (!(await isGitWorkTree(workDir))) return { kind: 'shared' as const, reason: `work dir ${workDir} is not in a git repository: the branches share it` };
          // From the work dir as the earlier stages left it (uncommitted work included), not from HEAD.
          const snapshot = await snapshotCommit(workDir, [FLOW_OUTPUT_DIR], 'fabric-harness flow: the work dir at a fan-out');
          const wt = await createWorktree(workDir, `flow/${name}`, owner, snapshot);
          return { kind: 'worktree' as const, path: wt.path, root: wt.root, branch: wt.branch, base: wt.base };
        });
      } catch (err) {
        throw encodeFailure(err);
      }
    },

    async fhFlowBranchWorkDirDone(input) {
      try {
        return await heartbeating(async () => {
          // The run's output files are its own, not the branch's work.
          await fs.rm(path.join(input.path, FLOW_OUTPUT_DIR), { recursive: true, force: true });
          const done = await finishWorktree({ root: input.root, branch: input.branch, base: input.base, cwd: input.workDir }, `fabric-harness flow branch (${input.branch})`);
          return { branch: done.branch, headSha: done.commit ?? input.base };
        });
      } catch (err) {
        throw encodeFailure(err);
      }
    },

    async fhFlowCleanup({ workDir }) {
      await heartbeating(() => fs.rm(path.join(workDir, FLOW_OUTPUT_DIR), { recursive: true, force: true }));
    },
  };
}
