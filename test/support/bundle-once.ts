import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleAgents } from '../../src/worker/bundle';

/** The agent modules every integration suite's worker runs. */
export const TEST_AGENT_MODULES = ['agents.ts', 'compaction-agents.ts', 'payload-agents.ts', 'session-agents.ts', 'strategy-agents.ts', 'ladder-agents.ts', 'context-agents.ts', 'ecosystem-agents.ts', 'gate-agents.ts', 'connection-agents.ts'].map((f) => path.resolve(__dirname, '../fixtures', f));

/** Bundles the test agent modules and writes the code to a temp file; returns its path. */
export async function bundleTestAgents(): Promise<string> {
  const bundle = await bundleAgents(TEST_AGENT_MODULES, { logger: quietLogger() });
  const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bundle-')), 'workflows.js');
  await fs.writeFile(file, bundle.code);
  return file;
}

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) };
}
