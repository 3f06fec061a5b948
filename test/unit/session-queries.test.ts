/**
 * How a session query meets the server's refusals: the ones that pass (a full one-query buffer, a run with
 * no workflow task yet) are asked again; anything else reaches the caller at once.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ServiceError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { isQueryRefusedForNow } from '../../src/client/query-retries';
import { runSessionQuery } from '../../src/client/session-updates';
import { pause } from '../../src/client/wait-bounds';

/** What the SDK's client throws for a query the server refused: a ServiceError caused by the gRPC error. */
function refused(code: number, details: string): ServiceError {
  return new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error(`${code} ${details}`), { code, details }) });
}

/**
 * A handle that must not be used: a refusal for now needs no describe() of the run. Only its client's
 * call context is read (is the caller's deadline or signal what ended the query?); a client with none.
 */
const idleClient = new Proxy({ connection: {} }, { get: (t, key) => { if (key in t) return t[key as 'connection']; throw new Error(`the client was used (${String(key)})`); } });
const noHandle = new Proxy({}, { get: (_, key) => { if (key === 'client') return idleClient; throw new Error(`the handle was used (${String(key)})`); } }) as WorkflowHandle;

describe('runSessionQuery', () => {
  it('asks again when the run buffered another query, or had no workflow task yet, and returns the answer', async () => {
    const errors = [
      refused(8, 'consistent query buffer is full, this may be caused by too many queries and workflow not able to process query fast enough'),
      refused(9, 'Workflow task is not scheduled yet.'),
      refused(9, 'Unable to query workflow due to Workflow Task in failed state.'),
      refused(14, 'buffered query cleared, please retry'),
    ];
    let calls = 0;
    const answer = await runSessionQuery(noHandle, 's1', async () => {
      const err = errors[calls++];
      if (err) throw err;
      return 'info';
    });
    expect(answer).toBe('info');
    expect(calls).toBe(5);
  });

  it('throws any other refusal at once, with the server error as its cause', async () => {
    let calls = 0;
    const other = refused(9, 'Workflow execution closed before WorkflowTaskStarted event');
    await expect(runSessionQuery(noHandle, 's1', async () => { calls++; throw other; })).rejects.toBe(other);
    expect(calls).toBe(1);
    const invalid = refused(3, 'query type not found');
    await expect(runSessionQuery(noHandle, 's1', async () => { throw invalid; })).rejects.toBe(invalid);
  });

  it('gives up after a bounded number of refusals, with the last one', async () => {
    jest.useFakeTimers();
    try {
      let calls = 0;
      const busy = refused(8, 'consistent query buffer is full');
      const run = runSessionQuery(noHandle, 's1', async () => { calls++; throw busy; });
      const settled = run.then(() => 'resolved', (e: unknown) => e);
      for (let i = 0; i < 40; i++) await jest.advanceTimersByTimeAsync(1_000);
      expect(await settled).toBe(busy);
      expect(calls).toBe(31);
    } finally {
      jest.useRealTimers();
    }
  });

  it("ends a back-off pause when the caller aborts: WAIT_ENDED at once, not at the pause's end", async () => {
    jest.useFakeTimers();
    try {
      // The client's call context, as client.withAbortSignal sets it; the probe for an idle queue finds nothing.
      const storage = new AsyncLocalStorage<{ abortSignal?: AbortSignal }>();
      const client = { connection: { callContextStorage: storage }, withDeadline: (_d: number, fn: () => unknown) => fn(), get workflowService(): never { throw new Error('no service here'); } };
      const handle = { client, workflowId: 's1' } as unknown as WorkflowHandle;
      const abort = new AbortController();
      const busy = refused(8, 'consistent query buffer is full');
      let calls = 0;
      const run = storage.run({ abortSignal: abort.signal }, () =>
        runSessionQuery(handle, 's1', async () => {
          calls++;
          // An aborted call fails at once, as the SDK's does under its signal.
          if (abort.signal.aborted) throw new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error('1 CANCELLED'), { code: 1 }) });
          throw busy;
        }),
      );
      const settled = run.then(() => 'resolved', (e: unknown) => e);
      // Pauses of 100, 200, … 700 ms (2.8 s): the eighth, of 800 ms, has just begun.
      await jest.advanceTimersByTimeAsync(2_800 + 1);
      expect(calls).toBe(8);
      abort.abort();
      await jest.advanceTimersByTimeAsync(1);
      expect(await Promise.race([settled, Promise.resolve('still waiting')])).toMatchObject({ code: 'WAIT_ENDED', reason: 'aborted', sessionId: 's1' });
    } finally {
      jest.useRealTimers();
    }
  });

  it('a query the spent deadline ended by cancelling the call (not the server\'s DEADLINE_EXCEEDED) is WAIT_ENDED too', async () => {
    // Either can end a call under client.withDeadline: a dev server showed 1 in 12 as CANCELLED "Call cancelled".
    const storage = new AsyncLocalStorage<{ deadline?: number }>();
    const client = { connection: { callContextStorage: storage }, withDeadline: (_d: number, fn: () => unknown) => fn(), get workflowService(): never { throw new Error('no service here'); } };
    const handle = { client, workflowId: 's1' } as unknown as WorkflowHandle;
    const cancelled = new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error('1 CANCELLED: Call cancelled'), { code: 1, details: 'Call cancelled' }) });
    const ended = await storage.run({ deadline: Date.now() - 1 }, () => runSessionQuery(handle, 's1', async () => { throw cancelled; })).catch((e: unknown) => e);
    expect(ended).toMatchObject({ code: 'WAIT_ENDED', reason: 'timeout', sessionId: 's1' });
    expect((ended as Error).cause).toBe(cancelled);
  });

  it('a pause is cut short by the deadline and by a signal aborted already', async () => {
    const t0 = Date.now();
    await pause(5_000, Date.now() + 20, []);
    await pause(5_000, undefined, [AbortSignal.abort()]);
    expect(Date.now() - t0).toBeLessThan(1_000);
  });

  it('follows a continue-as-new after a long restoring wait: only run hops count toward the hop limit', async () => {
    jest.useFakeTimers();
    try {
      // A run loading a long conversation answers "restoring" 25 times (more than the 20 run hops allowed),
      // then closes under the next ask (a continue-as-new); the session's current run answers.
      const handle = { client: idleClient, workflowId: 's1', describe: async () => ({ status: { name: 'RUNNING' } }) } as unknown as WorkflowHandle;
      const errors: Error[] = [...Array.from({ length: 25 }, () => new Error('SESSION_RESTORING: loading the conversation')), new WorkflowNotFoundError('not found', 's1', undefined)];
      let calls = 0;
      const run = runSessionQuery(handle, 's1', async () => {
        const err = errors[calls++];
        if (err) throw err;
        return 'info';
      });
      const settled = run.then((v) => v, (e: unknown) => e);
      for (let i = 0; i < 40; i++) await jest.advanceTimersByTimeAsync(100);
      expect(await settled).toBe('info');
      expect(calls).toBe(27);
    } finally {
      jest.useRealTimers();
    }
  });

  it('tells the refusals that pass from the rest by code and text, anywhere in the cause chain', () => {
    expect(isQueryRefusedForNow(refused(8, 'anything'))).toBe(true);
    expect(isQueryRefusedForNow(new Error('outer', { cause: refused(9, 'Workflow task is not scheduled yet.') }))).toBe(true);
    expect(isQueryRefusedForNow(refused(9, 'some other precondition'))).toBe(false);
    expect(isQueryRefusedForNow(refused(14, 'connection refused'))).toBe(false);
    expect(isQueryRefusedForNow(new Error('consistent query buffer is full'))).toBe(false);
  });
});
