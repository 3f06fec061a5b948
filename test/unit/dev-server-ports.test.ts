/**
 * Where startDevServer's ports come from, and what it does when the server did not come up on ports it chose:
 * the choice stays below the OS's ephemeral range (where outgoing connections and port-0 listeners take theirs),
 * and a start that missed @temporalio/testing's start window is made again on fresh ports, up to 3 starts, never
 * on a port the caller named and never for another kind of failure.
 */
import * as net from 'node:net';
import { DEV_SERVER_START_ATTEMPTS, isStartWindowMissed, startOnPorts, type DevServerPorts } from '../../src/testing/dev-server-attempts';
import { ephemeralRangeStart, getFreePort, isPortFree } from '../../src/testing/loopback-ports';

// The message @temporalio/testing 1.24 gives when the frontend never answered (checked against the real
// server in test/integration/testing-dev-server.test.ts).
const missed = () => new Error('Failed to start ephemeral server: ephemeral server at 127.0.0.1:41775 did not start within 5s. Make sure another download isn\'t stuck and delete the temp file.');

function picker(ports: number[]): { pick: () => Promise<number>; picked: number[] } {
  const picked: number[] = [];
  return { picked, pick: async () => { const p = ports.shift() ?? 0; picked.push(p); return p; } };
}

describe('loopback ports', () => {
  it('reads the ephemeral range where Linux says it, with a default for what it cannot read', () => {
    if (process.platform !== 'linux') return expect(ephemeralRangeStart()).toBe(32_768);
    expect(ephemeralRangeStart(() => '40000\t60999\n')).toBe(40_000);
    expect(ephemeralRangeStart(() => 'garbage')).toBe(32_768);
    expect(ephemeralRangeStart(() => { throw new Error('ENOENT'); })).toBe(32_768);
  });

  it('chooses a bindable port below the ephemeral range, and different ones from call to call', async () => {
    const ports = await Promise.all(Array.from({ length: 8 }, () => getFreePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralRangeStart());
      expect(await isPortFree(port)).toBe(true);
    }
    expect(new Set(ports).size).toBeGreaterThan(4);
  });

  it('tells a taken port from a free one', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      expect(await isPortFree(port)).toBe(false);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
    expect(await isPortFree(port)).toBe(true);
  });
});

describe('startOnPorts', () => {
  it('starts again on fresh ports (frontend and UI) when a start on chosen ports missed its window', async () => {
    const { pick, picked } = picker([20001, 20002, 20003, 20004]);
    const tried: DevServerPorts[] = [];
    const retried: DevServerPorts[] = [];
    const r = await startOnPorts({
      ui: true,
      pickPort: pick,
      onRetry: (failed) => retried.push(failed),
      start: async (ports) => {
        tried.push(ports);
        if (tried.length === 1) throw missed();
        return 'up';
      },
    });
    expect(r).toEqual({ ok: true, value: 'up', ports: { port: 20003, uiPort: 20004 }, attempts: 2 });
    expect(tried).toEqual([{ port: 20001, uiPort: 20002 }, { port: 20003, uiPort: 20004 }]);
    expect(retried).toEqual([{ port: 20001, uiPort: 20002 }]);
    expect(picked).toHaveLength(4);
  });

  it(`gives up after ${DEV_SERVER_START_ATTEMPTS} starts, with the last start's ports and error`, async () => {
    const { pick } = picker([20001, 20002, 20003, 20004]);
    let starts = 0;
    const last = missed();
    const r = await startOnPorts({ ui: false, pickPort: pick, start: async () => { starts++; throw starts === 3 ? last : missed(); } });
    expect(r).toEqual({ ok: false, error: last, ports: { port: 20003 }, attempts: 3 });
  });

  it('never swaps a port the caller named, and keeps a named UI port across fresh frontend ports', async () => {
    let starts = 0;
    const named = await startOnPorts({ port: 7233, ui: false, pickPort: async () => 1, start: async () => { starts++; throw missed(); } });
    expect(named).toMatchObject({ ok: false, ports: { port: 7233 }, attempts: 1 });
    expect(starts).toBe(1);

    const { pick } = picker([20001, 20002]);
    const tried: DevServerPorts[] = [];
    await startOnPorts({ uiPort: 8233, ui: true, pickPort: pick, start: async (p) => { tried.push(p); if (tried.length === 1) throw missed(); } });
    expect(tried).toEqual([{ port: 20001, uiPort: 8233 }, { port: 20002, uiPort: 8233 }]);
  });

  it('does not start again for a failure another start would repeat (a missing executable)', async () => {
    let starts = 0;
    const gone = new Error('ephemeral server executable does not exist: /nope/temporal');
    const r = await startOnPorts({ ui: false, pickPort: async () => 20001, start: async () => { starts++; throw gone; } });
    expect(r).toEqual({ ok: false, error: gone, ports: { port: 20001 }, attempts: 1 });
    expect(starts).toBe(1);
    expect(isStartWindowMissed(gone)).toBe(false);
    expect(isStartWindowMissed(missed())).toBe(true);
    expect(isStartWindowMissed('did not start within 5s')).toBe(false);
  });

  // What @temporalio/testing does on a port held by a listener that accepts and never answers: its start
  // never settles (the CLI long dead). The bound ends it, and what such a start comes up with late is stopped.
  it('bounds a start that never settles, starts again on fresh ports, and stops what a late start brings', async () => {
    const { pick } = picker([20001, 20002, 20003]);
    const abandoned: string[] = [];
    let lateStart: ((v: string) => void) | undefined;
    const tried: number[] = [];
    const r = await startOnPorts<string>({
      ui: false,
      pickPort: pick,
      boundMs: 50,
      abandon: (late) => abandoned.push(late),
      start: ({ port }) => {
        tried.push(port);
        if (tried.length === 1) return new Promise<string>((resolve) => (lateStart = resolve));
        return Promise.resolve(`up on ${port}`);
      },
    });
    expect(r).toEqual({ ok: true, value: 'up on 20002', ports: { port: 20002 }, attempts: 2 });
    lateStart?.('late on 20001');
    await new Promise((resolve) => setImmediate(resolve));
    expect(abandoned).toEqual(['late on 20001']);

    const never = await startOnPorts<string>({ port: 7233, ui: false, pickPort: pick, boundMs: 20, start: () => new Promise<string>(() => undefined) });
    expect(never).toMatchObject({ ok: false, attempts: 1, error: { message: expect.stringMatching(/did not start within 20 ms/) } });

    // Unbounded (a start that downloads the CLI first): it takes what it takes.
    const slow = await startOnPorts<string>({ ui: false, pickPort: pick, boundMs: Infinity, start: () => new Promise<string>((r) => setTimeout(() => r('downloaded, up'), 60)) });
    expect(slow).toMatchObject({ ok: true, value: 'downloaded, up', attempts: 1 });
  });
});
