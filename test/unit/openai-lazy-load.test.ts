/**
 * `openai` is an optional peer: a worker loads it only when an OpenAI connection makes its first call.
 * Checked in a fresh Node process, by what require.cache holds after loading the worker entry and
 * making (not calling) an OpenAI connection, and after a call.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function openaiModulesAfter(script: string): number {
  const run = `(async () => { ${script}; process.stdout.write(String(Object.keys(require.cache).filter((m) => /node_modules[\\\\/]openai[\\\\/]/.test(m)).length)); })();`;
  const out = execFileSync(process.execPath, ['-r', path.join(ROOT, 'test/support/swc-register.js'), '-e', run], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return Number(out);
}

describe('the openai package is loaded lazily', () => {
  const make = `require(${JSON.stringify(path.join(ROOT, 'src/worker/index.ts'))});
    const { ModelService } = require(${JSON.stringify(path.join(ROOT, 'src/activities/models/model-service.ts'))});
    const service = new ModelService({ connection: {}, connections: { oa: { provider: 'openai', apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1' } } });
    const provider = service.provider('oa')`;

  it('not by the worker entry, nor by making an OpenAI connection', () => {
    expect(openaiModulesAfter(make)).toBe(0);
  });

  it('(by its first call, so the check above can see it)', () => {
    expect(openaiModulesAfter(`${make}; await provider.call({ model: 'gpt-5.1', maxTokens: 16, tools: [], entries: [{ type: 'user', text: 'x' }] }, {}).catch(() => undefined)`)).toBeGreaterThan(0);
  });
});
