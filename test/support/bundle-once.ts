import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleAgents } from '../../src/worker/bundle';

/** Bundles test/fixtures/agents.ts and writes the code to a temp file; returns its path. */
export async function bundleTestAgents(): Promise<string> {
  const bundle = await bundleAgents(path.resolve(__dirname, '../fixtures/agents.ts'), { logger: quietLogger() });
  const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-bundle-')), 'workflows.js');
  await fs.writeFile(file, bundle.code);
  return file;
}

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) };
}
