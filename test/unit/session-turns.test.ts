/**
 * The turn loop's hooks for session workflows, on scripted ports (pure, no server): a tool call the
 * host refuses, a turn suspended while a call waits for approval and resumed by "another run" from the
 * carried state, and an interrupted turn that leaves every tool_use answered.
 */
import { Session, type SuspendedTurn, type ToolAuthorizer } from '../../src/core/conversation';
import { InterruptedError, TurnSuspendedError } from '../../src/core/errors';
import type { ModelCallResult, RuntimePorts } from '../../src/core/ports';
import type { AssistantEntry, Entry } from '../../src/core/entries';
import { builtinTools } from '../../src/core/builtin-tools';
import { toApiMessages } from '../../src/core/entries';
import { validateMessagesRequest } from '../../src/testing';

function toolUse(id: string, name: string, input: unknown): AssistantEntry {
  return { type: 'assistant', content: [{ type: 'tool_use', id, name, input }] } as AssistantEntry;
}
function text(t: string): AssistantEntry {
  return { type: 'assistant', content: [{ type: 'text', text: t }] } as AssistantEntry;
}

function ports(replies: AssistantEntry[], ran: string[], toolImpl?: (name: string) => Promise<string>): RuntimePorts {
  const next = async (): Promise<ModelCallResult> => {
    const entry = replies.shift();
    if (!entry) throw new Error('script exhausted');
    const stopReason = entry.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
    return { entry, usage: { inputTokens: 10, outputTokens: 5 }, stopReason, model: 'm' };
  };
  return {
    runtime: 'inline',
    callModel: next,
    decideThenCallModel: async () => ({ decision: { compact: false } as never, result: await next() }),
    summarize: async () => ({ text: 'summary', usage: { inputTokens: 0, outputTokens: 0 } }),
    runTool: async (call) => {
      ran.push(call.name);
      return { content: toolImpl ? await toolImpl(call.name) : `${call.name} ok`, isError: false };
    },
    decideCompaction: async () => ({ compact: false }) as never,
    resolveModel: async (model) => ({ model: model ?? 'm' }),
    now: () => 0,
    emit: () => undefined,
  };
}

function session(p: RuntimePorts, authorize?: ToolAuthorizer): Session {
  return new Session(p, {
    id: 'main',
    model: 'm',
    maxTokens: 100,
    tools: [builtinTools.read_file, builtinTools.write_file],
    cwd: '.',
    maxSteps: 10,
    compaction: undefined,
    compactionDefaultEnabled: false,
    contextWindowTokens: 100_000,
    authorize,
  });
}

function expectSendable(entries: readonly Entry[]) {
  expect(validateMessagesRequest({ model: 'm', max_tokens: 1, messages: [...toApiMessages([...entries]), { role: 'user', content: 'next' }] })).toBeUndefined();
}

describe('session turns with a host', () => {
  it('a refused call goes to the model as an error result and the tool never runs', async () => {
    const ran: string[] = [];
    const s = session(ports([toolUse('t1', 'write_file', { path: 'a', content: 'b' }), text('ok')], ran), async () => ({ allow: false, content: 'Not in explore mode.' }));
    expect(await s.prompt('write')).toBe('ok');
    expect(ran).toEqual([]);
    const results = s.messages()[2] as Extract<Entry, { type: 'tool_results' }>;
    expect(results.results[0]).toMatchObject({ tool_use_id: 't1', content: 'Not in explore mode.', is_error: true });
  });

  it('suspends while a call waits for approval, keeps the other result, and another session resumes the turn', async () => {
    const ran: string[] = [];
    const script = [toolUse('t1', 'read_file', { path: 'x' }), text('never used')];
    script[0]!.content.push({ type: 'tool_use', id: 't2', name: 'write_file', input: { path: 'y', content: 'z' } } as never);
    const first = session(ports(script, ran), async (call) => {
      if (call.name === 'read_file') return { allow: true };
      throw new TurnSuspendedError();
    });
    await expect(first.prompt('read then write')).rejects.toBeInstanceOf(TurnSuspendedError);
    const turn = first.suspendedTurn() as SuspendedTurn;
    expect(turn.calls.map((c) => c.id)).toEqual(['t1', 't2']);
    expect(turn.results.map((r) => r.tool_use_id)).toEqual(['t1']);
    expect(first.messages().map((e) => e.type)).toEqual(['user', 'assistant']); // not rolled back
    expect(ran).toEqual(['read_file']);

    // The next run: the conversation restored from the store, the turn carried.
    const carried: SuspendedTurn = JSON.parse(JSON.stringify(turn));
    const ran2: string[] = [];
    const second = session(ports([text('both done')], ran2), async () => ({ allow: true }));
    second.restore({ entries: JSON.parse(JSON.stringify(first.messages())) });
    expect(await second.resumeTurn(carried)).toBe('both done');
    expect(ran2).toEqual(['write_file']); // the read is not run again
    const results = second.messages()[2] as Extract<Entry, { type: 'tool_results' }>;
    expect(results.results.map((r) => r.tool_use_id)).toEqual(['t1', 't2']);
    expectSendable(second.messages());
  });

  it('an interrupted tool call keeps the prompt and answers every tool_use; the session goes on', async () => {
    const ran: string[] = [];
    const s = session(
      ports([toolUse('t1', 'read_file', { path: 'x' }), text('after')], ran, async () => {
        throw new InterruptedError();
      }),
    );
    await expect(s.prompt('read')).rejects.toBeInstanceOf(InterruptedError);
    expect(s.messages().map((e) => e.type)).toEqual(['user', 'assistant', 'tool_results']);
    expectSendable(s.messages());
    expect(await s.prompt('again')).toBe('after');
  });

  it('a failed prompt is still rolled back whole (not an interruption)', async () => {
    const s = session(ports([], []));
    await expect(s.prompt('boom')).rejects.toThrow('script exhausted');
    expect(s.messages()).toEqual([]);
  });
});
