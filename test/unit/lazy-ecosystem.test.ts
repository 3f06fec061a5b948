/**
 * Telemetry and MCP cost nothing at import: loading the entries (default, client, worker) loads no
 * OpenTelemetry and no MCP SDK module; they load when createTelemetry() runs or a server is first used.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function loadedAfter(script: string): string[] {
  const out = execFileSync(process.execPath, ['-r', './test/support/swc-register.js', '-e', `${script}; console.log(JSON.stringify(Object.keys(require.cache)))`], { cwd: ROOT, encoding: 'utf8' });
  // @opentelemetry/api alone is not ours to count: the Anthropic SDK loads it when it is installed.
  return (JSON.parse(out.trim().split('\n').at(-1)!) as string[]).filter((k) => /@opentelemetry\/(?!api\/)|@modelcontextprotocol|interceptors-opentelemetry/.test(k));
}

describe('lazy loading', () => {
  it('the entries load neither OpenTelemetry nor the MCP SDK', () => {
    expect(loadedAfter("require('./src/index.ts'); require('./src/client/index.ts'); require('./src/worker/index.ts')")).toEqual([]);
  });

  it('createTelemetry() loads OpenTelemetry', () => {
    expect(loadedAfter("require('./src/worker/index.ts').createTelemetry({ endpoint: 'http://127.0.0.1:9/v1/traces' })").length).toBeGreaterThan(0);
  });
});
