/**
 * Workers connect the way `fh` does: a worker process given nothing but a Temporal config file profile
 * (TEMPORAL_CONFIG_FILE + TEMPORAL_PROFILE, TOML, read through @temporalio/envconfig) finds the server
 * and namespace there, and runs an agent.
 */
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startAgent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { chatter } from '../fixtures/compaction-agents';
import { testConnection } from '../support/temporal';
import { killHard, startTsProcess } from '../support/worker-process-control';

describe('worker connection through a Temporal config profile', () => {
  it('a worker started with only a TOML profile (address + namespace) runs an agent', async () => {
    const t = await testConnection();
    const fake = await FakeAnthropicServer.start({ script: [say('answered through the profile')] });
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-profile-'));
    const taskQueue = `profile-worker-${process.pid}-${Date.now()}`;
    let child: ChildProcess | undefined;
    try {
      const configFile = path.join(dir, 'temporal.toml');
      // A decoy default profile that points nowhere: the worker must pick the named one.
      await fs.writeFile(
        configFile,
        [
          '[profile.default]',
          'address = "127.0.0.1:1"',
          '',
          '[profile.deploy]',
          `address = "${t.address}"`,
          `namespace = "${t.namespace}"`,
          '',
        ].join('\n'),
      );
      child = await startTsProcess(path.join(__dirname, '../support/profile-worker-process.ts'), {
        TEMPORAL_CONFIG_FILE: configFile,
        TEMPORAL_PROFILE: 'deploy',
        FH_TASK_QUEUE: taskQueue,
        FH_FAKE_URL: fake.url,
        FH_STORE_DIR: path.join(dir, 'store'),
      });
      const run = await startAgent(t.client, chatter, { prompts: ['hello'], contextWindowTokens: 100_000 }, { workflowId: `profile-${Date.now()}`, taskQueue });
      expect((await run.result()).replies).toEqual(['answered through the profile']);
      const history = await run.fetchHistory();
      const identities = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.identity);
      expect(identities.length).toBeGreaterThan(0);
      for (const id of identities) expect(id).toMatch(new RegExp(`^${child.pid}@`));
    } finally {
      if (child) await killHard(child);
      await t.close();
      await fake.stop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
