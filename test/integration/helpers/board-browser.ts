/**
 * Debian's Chromium (/usr/bin/chromium, installed by scripts/chromium.js) driven by playwright-core: no
 * browser is downloaded. Headless, sandbox off (CI containers), no network chatter, a fresh profile.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.resolve(__dirname, '../../../test-artifacts/board');

export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-board-chromium-'));
  await fs.mkdir(ARTIFACTS, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 860 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    context,
    async close() {
      await context.close();
      await fs.rm(profile, { recursive: true, force: true });
    },
  };
}
