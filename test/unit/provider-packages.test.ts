/**
 * The Bedrock and Vertex SDKs are optional peers: nothing loads them until a connection makes its
 * client, and a missing one is PROVIDER_PACKAGE_MISSING naming what to install.
 */
import type { Connections as ConnectionsClass } from '../../src/activities/models/connections';

function connectionsModule(): { Connections: typeof ConnectionsClass } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../src/activities/models/connections');
}

describe('optional provider packages', () => {
  it('are loaded when the connection makes its first client, not before', () => {
    const loaded: string[] = [];
    jest.isolateModules(() => {
      for (const name of ['@anthropic-ai/bedrock-sdk', '@anthropic-ai/vertex-sdk']) {
        jest.doMock(name, () => {
          loaded.push(name);
          return jest.requireActual(name);
        });
      }
      const connections = new (connectionsModule().Connections)({ v: { provider: 'vertex', region: 'us-east5', projectId: 'p', accessToken: 't' } });
      const bedrock = connections.provider('bedrock') as unknown as { client(): unknown };
      const vertex = connections.provider('v') as unknown as { client(): unknown };
      expect(loaded).toEqual([]);
      bedrock.client();
      expect(loaded).toEqual(['@anthropic-ai/bedrock-sdk']);
      vertex.client();
      expect(loaded).toEqual(['@anthropic-ai/bedrock-sdk', '@anthropic-ai/vertex-sdk']);
    });
  });

  it.each([
    ['bedrock', '@anthropic-ai/bedrock-sdk'],
    ['vertex', '@anthropic-ai/vertex-sdk'],
  ] as const)('missing for %s: PROVIDER_PACKAGE_MISSING naming %s', async (provider, name) => {
    await jest.isolateModulesAsync(async () => {
      jest.doMock(name, () => {
        const err = new Error(`Cannot find module '${name}' from 'src/activities/models/${provider}/provider.ts'`) as NodeJS.ErrnoException;
        err.code = 'MODULE_NOT_FOUND';
        throw err;
      });
      const p = new (connectionsModule().Connections)({ c: { provider, region: 'r', projectId: 'p' } as never }).provider('c');
      const err = await p.call({ model: 'claude-x', maxTokens: 1, tools: [], entries: [{ type: 'user', text: 'hi' }] }, {}).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'PROVIDER_PACKAGE_MISSING', packageName: name });
      expect((err as Error).message).toContain(`npm install ${name}`);
    });
  });
});
