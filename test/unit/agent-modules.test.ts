/**
 * createWorker({ agents }) takes what an ES module can say as well as what CommonJS can: an ES module
 * has no `require.resolve`, so it names its agents file `new URL('./agents.js', import.meta.url)` (a URL
 * object, or its `file:` string). README's worker.ts does; doc-samples.test.ts runs it in an ES module
 * project.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolveAgentModules } from '../../src/worker/bundle';

const HERE = __filename;

describe('resolveAgentModules', () => {
  it('resolves a file: URL object, a file: URL string and a path to the same file', () => {
    const url = pathToFileURL(HERE);
    expect(resolveAgentModules([url, url.href, path.relative(process.cwd(), HERE)])).toEqual([HERE, HERE, HERE]);
  });

  it('resolves a URL without an extension as require.resolve does a path', () => {
    expect(resolveAgentModules(new URL(pathToFileURL(HERE.replace(/\.ts$/, ''))))).toEqual([HERE]);
  });
});
