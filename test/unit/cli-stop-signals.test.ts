import { nextStopSignal, onStopSignals, STOP_SIGNALS } from '../../src/cli/stop-signals';

const counts = () => STOP_SIGNALS.map((s) => process.listenerCount(s));

describe('the stop signals of long-running fh commands', () => {
  it('include SIGHUP, the signal of a closed terminal, beside Ctrl-C and SIGTERM', () => {
    expect([...STOP_SIGNALS].sort()).toEqual(['SIGHUP', 'SIGINT', 'SIGTERM']);
  });

  it('onStopSignals reports each signal, a second one too, until it is turned off', () => {
    const before = counts();
    const seen: string[] = [];
    const off = onStopSignals((s) => seen.push(s));
    expect(counts()).toEqual(before.map((n) => n + 1));
    process.emit('SIGHUP', 'SIGHUP');
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGHUP', 'SIGHUP');
    expect(seen).toEqual(['SIGHUP', 'SIGINT', 'SIGHUP']);
    off();
    expect(counts()).toEqual(before);
  });

  it('nextStopSignal resolves with the first signal and stops listening, so a second one gets the default', async () => {
    const before = counts();
    const next = nextStopSignal();
    expect(counts()).toEqual(before.map((n) => n + 1));
    process.emit('SIGTERM', 'SIGTERM');
    await expect(next).resolves.toBe('SIGTERM');
    expect(counts()).toEqual(before);
  });

  it('a command may narrow them: fh fake waits on Ctrl-C and SIGTERM only, since SIGHUP starts its script over', async () => {
    const before = counts();
    const next = nextStopSignal(['SIGINT', 'SIGTERM']);
    expect(process.listenerCount('SIGHUP')).toBe(before[STOP_SIGNALS.indexOf('SIGHUP')]);
    let settled = false;
    void next.then(() => (settled = true));
    process.emit('SIGHUP', 'SIGHUP');
    await Promise.resolve();
    expect(settled).toBe(false);
    process.emit('SIGINT', 'SIGINT');
    await expect(next).resolves.toBe('SIGINT');
    expect(counts()).toEqual(before);
  });
});
