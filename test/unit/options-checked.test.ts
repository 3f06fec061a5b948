/**
 * Mistakes that used to pass silently (issue 19, item 5): an unknown `invoke()` option, a sandbox
 * directory that does not exist, a store directory that does not exist, and a network error that does not
 * say where it tried to go. Each is an error at once, naming the field or the URL, and nothing is made on
 * disk.
 */
import Anthropic from '@anthropic-ai/sdk';
import { existsSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { agent, openSession, schema } from '@fabric-harness/sdk';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { callMessages } from '../../src/activities/models/anthropic/messages';
import { confinedNewPath } from '../../src/activities/tools/sandbox/sandbox-path';
import { bash } from '../../src/activities/tools/local-tools';
import { collectableStore } from '../../src/activities/stores/store-gc';

const echo = agent({
  name: 'echo',
  input: schema.object({ dir: schema.string().optional() }),
  run: async ({ init, input }) => {
    const fabric = await init({ system: 'Echo.', ...(input.dir ? { sandbox: { type: 'local' as const, cwd: input.dir } } : {}) });
    return (await fabric.session()).prompt<string>('hi');
  },
});

const missingDir = () => path.join(os.tmpdir(), `fh-missing-${process.pid}-${Math.random().toString(36).slice(2)}`, 'dir');

describe('options are checked everywhere alike', () => {
  let fake: FakeAnthropicServer;
  beforeEach(async () => {
    fake = await FakeAnthropicServer.start({ script: [say('hi')] });
  });
  afterEach(() => fake.stop());

  it('invoke() refuses an unknown option, naming it and the option it most likely meant, before any call', async () => {
    const err = await echo.invoke({}, { apiKey: 'k', baseUrl: fake.url } as never).catch((e) => e);
    expect({ code: err.code, field: err.field }).toEqual({ code: 'INVALID_INPUT', field: 'baseUrl' });
    expect(err.message).toContain("unknown option 'baseUrl' (did you mean 'baseURL'?)");
    expect(fake.requests).toHaveLength(0);
    // The right spelling works.
    await expect(echo.invoke({}, { apiKey: 'k', baseURL: fake.url })).resolves.toBe('hi');
  });

  it('invoke() refuses an unknown option with no near name by listing the known ones', async () => {
    const err = await echo.invoke({}, { apiKey: 'k', baseURL: fake.url, retries: 3 } as never).catch((e) => e);
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message).toMatch(/unknown option 'retries' \(known options: apiKey, baseURL, model, cwd/);
  });

  it('invoke() names every unknown option at once, not only the first', async () => {
    const err = await echo.invoke({}, { apikey: 'k', modle: 'm', baseURL: fake.url } as never).catch((e) => e);
    expect({ code: err.code, field: err.field }).toEqual({ code: 'INVALID_INPUT', field: 'apikey' });
    expect(err.issues.map((i: { path: string }) => i.path)).toEqual(['apikey', 'modle']);
    expect(err.message).toContain("unknown option 'apikey' (did you mean 'apiKey'?)");
    expect(err.message).toContain("unknown option 'modle' (known options: apiKey, baseURL, model");
    expect(fake.requests).toHaveLength(0);
  });

  it('a value no branch of a union takes names the allowed values, not "Invalid input" alone', async () => {
    const withSandbox = (sandbox: unknown) =>
      agent({
        name: 'sandboxed',
        run: async ({ init }) => (await (await init({ sandbox: sandbox as never })).session()).prompt<string>('hi'),
      });
    const typo = await withSandbox({ type: 'locl' }).invoke({}, { apiKey: 'k', baseURL: fake.url }).catch((e) => e);
    expect({ code: typo.code, field: typo.field }).toEqual({ code: 'INVALID_INPUT', field: 'sandbox.type' });
    expect(typo.message).toContain('sandbox.type: Invalid input: expected "local"');
    const wrong = await withSandbox('docker').invoke({}, { apiKey: 'k', baseURL: fake.url }).catch((e) => e);
    expect({ code: wrong.code, field: wrong.field }).toEqual({ code: 'INVALID_INPUT', field: 'sandbox' });
    expect(wrong.message).toContain('sandbox: Invalid input: expected "local" or an object, received string');
    expect(fake.requests).toHaveLength(0);
  });

  it('openSession() refuses an unknown option too', async () => {
    const err = await openSession(echo, { dir: os.tmpdir(), baseUrl: fake.url } as never).catch((e) => e);
    expect({ code: err.code, field: err.field }).toEqual({ code: 'INVALID_INPUT', field: 'baseUrl' });
  });

  it('a sandbox directory that does not exist is an error naming sandbox.cwd, and is not created', async () => {
    const dir = missingDir();
    const err = await echo.invoke({ dir }, { apiKey: 'k', baseURL: fake.url }).catch((e) => e);
    expect({ code: err.code, field: err.field }).toEqual({ code: 'INVALID_INPUT', field: 'sandbox.cwd' });
    expect(err.message).toContain(`directory ${dir} does not exist`);
    expect(existsSync(path.dirname(dir))).toBe(false);
    expect(fake.requests).toHaveLength(0);
  });

  it("invoke's cwd that does not exist is an error naming cwd", async () => {
    const err = await echo.invoke({}, { apiKey: 'k', baseURL: fake.url, cwd: missingDir() }).catch((e) => e);
    expect({ code: err.code, field: err.field }).toEqual({ code: 'INVALID_INPUT', field: 'cwd' });
  });

  it('the file tools and bash on a worker never create a missing sandbox directory (SANDBOX_MISSING)', async () => {
    const dir = missingDir();
    await expect(confinedNewPath(dir, 'notes.txt')).rejects.toMatchObject({ code: 'SANDBOX_MISSING' });
    await expect(bash({ command: 'true' }, { cwd: dir, signal: new AbortController().signal, heartbeat: () => undefined } as never)).rejects.toMatchObject({
      code: 'SANDBOX_MISSING',
    });
    expect(existsSync(path.dirname(dir))).toBe(false);
  });

  it('a store directory that does not exist is refused, not created and swept as empty', () => {
    const dir = missingDir();
    expect(() => collectableStore({ dir })).toThrow(expect.objectContaining({ code: 'STORE_NOT_COLLECTABLE' }));
    expect(() => collectableStore({ dir })).toThrow(`the store directory ${dir} does not exist`);
    expect(existsSync(path.dirname(dir))).toBe(false);
  });
});

describe('network errors name the URL', () => {
  it('a connection refused says which base URL it could not reach', async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const baseURL = `http://127.0.0.1:${port}`;
    const client = new Anthropic({ apiKey: 'k', baseURL, maxRetries: 0 });
    const err = await callMessages(client, { model: 'claude-test', maxTokens: 10, messages: [{ role: 'user', content: 'hi' }] } as never).catch((e) => e);
    expect(err.code).toBe('MODEL_NETWORK');
    expect(err.message).toContain(baseURL);
  });
});
