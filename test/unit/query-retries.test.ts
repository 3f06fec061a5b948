/**
 * The one loop a session's reads and a run's reads share (retryQuery): what it asks again, what it ends
 * with, and the errors it takes from its caller. A fake client (only its call context) and a fake handle
 * (only the two describes the loop probes with).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ServiceError, type WorkflowHandle } from '@temporalio/client';
import { retryQuery, type QueryRetries } from '../../src/client/query-retries';

/** What the SDK's client throws for a failed query: a ServiceError caused by the gRPC error. */
function grpc(code: number, details: string): ServiceError {
  return new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error(`${code} ${details}`), { code, details }) });
}
const timedOut = () => grpc(4, 'DEADLINE_EXCEEDED: query timed out before a worker could process it');
const refusedForNow = () => grpc(8, 'consistent query buffer is full');

class Ended extends Error {
  constructor(
    readonly why: string,
    readonly noWorker: { taskQueue: string } | undefined,
  ) {
    super(`ended: ${why}`);
  }
}
class NoWorker extends Error {
  constructor(readonly taskQueue: string | undefined) {
    super(`no worker: ${taskQueue}`);
  }
}
class Typed extends Error {}

/** A handle whose run is on task queue `q1`, polled by `pollers` workers; counts the describes. */
function fakeHandle(pollers: number) {
  const calls = { describe: 0, taskQueue: 0 };
  const workflowService = {
    describeWorkflowExecution: async () => (calls.describe++, { workflowExecutionInfo: { taskQueue: 'q1' } }),
    describeTaskQueue: async () => (calls.taskQueue++, { pollers: Array.from({ length: pollers }, () => ({})) }),
  };
  const handle = { workflowId: 'w1', client: { options: { namespace: 'default' }, workflowService } } as unknown as WorkflowHandle;
  return { handle, calls };
}

const storage = new AsyncLocalStorage<{ deadline?: number; abortSignal?: AbortSignal }>();
const client = { connection: { callContextStorage: storage }, withDeadline: (_d: number, fn: () => unknown) => fn(), withAbortSignal: (_s: AbortSignal, fn: () => unknown) => fn() } as unknown as QueryRetries['client'];

function options(handle: WorkflowHandle, more: Partial<QueryRetries> = {}): QueryRetries {
  return {
    client,
    handle,
    waitEnded: (why, noWorker) => new Ended(why, noWorker),
    noWorker: (taskQueue) => new NoWorker(taskQueue),
    typed: (err) => new Typed(`typed: ${(err as Error).message}`, { cause: err }),
    ...more,
  };
}

/** A query that throws each of `errors` in turn, then answers 'answer'. */
function failing(errors: unknown[]) {
  const asked = { count: 0 };
  const query = async () => {
    const err = errors[asked.count++];
    if (err) throw err;
    return 'answer';
  };
  return { query, asked };
}

describe('retryQuery', () => {
  it('passes an answer through, probing nothing', async () => {
    const { handle, calls } = fakeHandle(1);
    const { query, asked } = failing([]);
    await expect(retryQuery(query, options(handle))).resolves.toBe('answer');
    expect(asked.count).toBe(1);
    expect(calls).toEqual({ describe: 0, taskQueue: 0 });
  });

  it("ends with the caller's wait-ended error when its signal aborted, naming an idle queue, the failure as its cause", async () => {
    const { handle } = fakeHandle(0);
    const err = grpc(1, 'CANCELLED: Call cancelled');
    const { query, asked } = failing([err]);
    const ended = await storage.run({ abortSignal: AbortSignal.abort() }, () => retryQuery(query, options(handle))).catch((e: unknown) => e);
    expect(ended).toBeInstanceOf(Ended);
    expect(ended).toMatchObject({ why: 'aborted', noWorker: { taskQueue: 'q1' } });
    expect((ended as Error).cause).toBe(err);
    expect(asked.count).toBe(1);
  });

  it('a spent deadline ends a query timeout as wait-ended (reason timeout), not retried', async () => {
    const { handle } = fakeHandle(1);
    const { query, asked } = failing([timedOut(), timedOut()]);
    const ended = await storage.run({ deadline: Date.now() - 1 }, () => retryQuery(query, options(handle))).catch((e: unknown) => e);
    expect(ended).toMatchObject({ why: 'timeout', noWorker: undefined });
    expect(asked.count).toBe(1);
  });

  it('asks again after a query timeout while a worker polls', async () => {
    const { handle, calls } = fakeHandle(1);
    const { query, asked } = failing([timedOut(), timedOut()]);
    await expect(retryQuery(query, options(handle))).resolves.toBe('answer');
    expect(asked.count).toBe(3);
    expect(calls.taskQueue).toBe(2);
  });

  it("ends a query timeout with the caller's no-worker error when none polls, naming the queue", async () => {
    const { handle } = fakeHandle(0);
    const err = timedOut();
    const { query, asked } = failing([err]);
    const failed = await retryQuery(query, options(handle)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(NoWorker);
    expect(failed).toMatchObject({ taskQueue: 'q1' });
    expect((failed as Error).cause).toBe(err);
    expect(asked.count).toBe(1);
  });

  it('asks again after a refusal for now, with back-off, and returns the answer', async () => {
    const { handle, calls } = fakeHandle(1);
    const { query, asked } = failing([refusedForNow(), refusedForNow()]);
    const t0 = Date.now();
    await expect(retryQuery(query, options(handle))).resolves.toBe('answer');
    expect(asked.count).toBe(3);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250); // pauses of 100 and 200 ms
    expect(calls.describe).toBe(0);
  });

  it("a \"no poller seen\" is the caller's no-worker error, naming the run's queue", async () => {
    const { handle } = fakeHandle(0);
    const { query } = failing([grpc(9, 'no poller seen for task queue recently')]);
    const failed = await retryQuery(query, options(handle)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(NoWorker);
    expect(failed).toMatchObject({ taskQueue: 'q1' });
  });

  it("types any other failure with the caller's function, once", async () => {
    const { handle } = fakeHandle(1);
    const err = grpc(3, 'query type not found');
    const { query, asked } = failing([err, err]);
    const failed = await retryQuery(query, options(handle)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Typed);
    expect((failed as Error).cause).toBe(err);
    expect(asked.count).toBe(1);
  });

  it('asks again when a step says so (a restoring run)', async () => {
    const { handle } = fakeHandle(1);
    const restoring = () => new Error('SESSION_RESTORING: loading');
    const { query, asked } = failing([timedOut(), restoring(), restoring()]);
    let steps = 0;
    const afterTimeouts: QueryRetries['afterTimeouts'] = async (err, { wait }) => {
      if (!(err as Error).message.startsWith('SESSION_RESTORING')) return false;
      steps += 1;
      await wait(1);
      return true;
    };
    await expect(retryQuery(query, options(handle, { afterTimeouts }))).resolves.toBe('answer');
    expect(asked.count).toBe(4);
    expect(steps).toBe(2);
  });

  it('runs the last step after "no poller" and before the typing: what it throws is the caller\'s', async () => {
    const { handle } = fakeHandle(1);
    const gone = new Error('workflow not found');
    const closed = new Error('closed');
    const seen: unknown[] = [];
    const beforeTyped: QueryRetries['beforeTyped'] = async (err) => {
      seen.push(err);
      throw closed;
    };
    await expect(retryQuery(failing([gone]).query, options(handle, { beforeTyped }))).rejects.toBe(closed);
    expect(seen).toEqual([gone]);
    // Refusals and query timeouts never reach it while they are asked again.
    seen.length = 0;
    const { query } = failing([timedOut(), refusedForNow()]);
    await expect(retryQuery(query, options(handle, { beforeTyped }))).resolves.toBe('answer');
    expect(seen).toEqual([]);
  });
});
