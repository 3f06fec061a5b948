/**
 * The hygiene settings (validated, naming the field), capping wired into the session's tool results,
 * and the model transport sending a capped result as it is (not swapped back for its stored full copy).
 */
import { parseCompactionSettings } from '../../src/core/context/settings';
import { Session } from '../../src/core/conversation';
import type { ModelCallResult, RuntimePorts } from '../../src/core/ports';
import type { AssistantEntry, Entry, ToolResultsEntry } from '../../src/core/entries';
import { builtinTools } from '../../src/core/builtin-tools';
import { estimateToolResultTokens } from '../../src/core/tokens';
import { ModelTransport } from '../../src/workflows/model-transport';
import { fieldOf } from './compaction-helpers';

describe('hygiene settings', () => {
  it('accepts them', () => {
    const s = { keepRecentEntries: 20, keepRecentTokens: 8000, toolResults: { maxTokens: 8000, maskAfterEntries: 10, maskAfterTokens: 20_000, preserve: { defaults: true, tools: ['screenshot'], commands: ['^deno test'], results: ['ALL GREEN'] } } };
    expect(parseCompactionSettings(s)).toEqual(s);
  });

  it.each([
    [{ keepRecentTokens: 0 }, 'keepRecentTokens'],
    [{ keepRecentTokens: 1.5 }, 'keepRecentTokens'],
    [{ toolResults: { maxTokens: 10 } }, 'toolResults.maxTokens'],
    [{ toolResults: { maskAfterEntries: 0 } }, 'toolResults.maskAfterEntries'],
    [{ toolResults: { maskAfterTokens: -5 } }, 'toolResults.maskAfterTokens'],
    [{ toolResults: { preserve: { commands: ['(unclosed'] } } }, 'toolResults.preserve.commands.0'],
    [{ toolResults: { preserve: { results: ['ok', '['] } } }, 'toolResults.preserve.results.1'],
    [{ toolResults: { bogus: 1 } }, 'toolResults.bogus'],
    [{ toolResults: { preserve: { tool: ['x'] } } }, 'toolResults.preserve.tool'],
  ])('%j is refused naming %s', (value, field) => {
    expect(fieldOf(() => parseCompactionSettings(value))).toBe(field);
  });
});

function toolUse(id: string, input: unknown): AssistantEntry {
  return { type: 'assistant', content: [{ type: 'tool_use', id, name: 'read_file', input }] } as AssistantEntry;
}

function ports(toolOutput: string, contentRef?: string): { ports: RuntimePorts; sent: Entry[][] } {
  const replies: AssistantEntry[] = [toolUse('t1', { path: 'big.log' }), { type: 'assistant', content: [{ type: 'text', text: 'done' }] }];
  const sent: Entry[][] = [];
  const next = async (entries: Entry[]): Promise<ModelCallResult> => {
    sent.push([...entries]);
    const entry = replies.shift()!;
    return { entry, usage: { inputTokens: 10, outputTokens: 5 }, stopReason: entry.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn', model: 'm' };
  };
  return {
    sent,
    ports: {
      runtime: 'inline',
      callModel: (req) => next(req.entries as Entry[]),
      decideThenCallModel: async (req) => ({ decision: { compact: false } as never, result: await next(req.entries as Entry[]) }),
      summarize: async () => ({ text: 's', usage: { inputTokens: 0, outputTokens: 0 } }),
      runTool: async () => (contentRef ? { content: toolOutput, isError: false, contentRef } : { content: toolOutput, isError: false }),
      decideCompaction: async () => ({ compact: false }) as never,
      resolveModel: async (model) => ({ model: model ?? 'm' }),
      now: () => 0,
      emit: () => undefined,
    },
  };
}

function session(p: RuntimePorts, compaction: ConstructorParameters<typeof Session>[1]['compaction']): Session {
  return new Session(p, { id: 'main', model: 'm', maxTokens: 100, tools: [builtinTools.read_file], cwd: '.', maxSteps: 5, compaction, compactionDefaultEnabled: false, contextWindowTokens: 100_000 });
}

const log = Array.from({ length: 3000 }, (_, i) => `log line ${i}`).join('\n'); // ≈ 9k tokens

describe('capping in the session', () => {
  it('a result over toolResults.maxTokens is capped before the model sees it, naming the stored copy', async () => {
    const { ports: p, sent } = ports(log, 'sha-of-the-log');
    const s = session(p, { toolResults: { maxTokens: 500 } });
    expect(await s.prompt('read the log')).toBe('done');
    const result = (s.messages()[2] as ToolResultsEntry).results[0]!;
    expect(estimateToolResultTokens(result.content)).toBeLessThanOrEqual(500);
    expect(result.content).toMatch(/\n\[truncated, \d+ tokens omitted\]\n\[full output: read_artifact\(\{"ref":"sha-of-the-log","offset":0\}\)\]\n/);
    expect(result.content.startsWith('log line 0\n')).toBe(true);
    expect(result.content.endsWith('log line 2999')).toBe(true);
    expect((sent[1]!.at(-1) as ToolResultsEntry).results[0]!.content).toBe(result.content);
  });

  it('without the setting (or within it) the result is kept whole', async () => {
    const a = ports(log);
    const s = session(a.ports, undefined);
    await s.prompt('read the log');
    expect((s.messages()[2] as ToolResultsEntry).results[0]!.content).toBe(log);
    const b = ports('short');
    const t = session(b.ports, { toolResults: { maxTokens: 500 } });
    await t.prompt('read the log');
    expect((t.messages()[2] as ToolResultsEntry).results[0]!.content).toBe('short');
  });
});

describe('the model transport and rewritten tool results', () => {
  const req = (entries: Entry[]) => ({ sessionId: 's', model: 'm', maxTokens: 10, tools: [], entries });
  const resultEntry = (content: string): Entry => ({ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 'tu1', content }] });

  it('a result as stored goes by reference; a capped one goes as it is', () => {
    const t = new ModelTransport();
    t.toolResultStored('tu1', 'ref-1', log.length);
    expect(t.input(req([resultEntry(log)]), true).delta).toEqual([{ type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 'tu1', content: '', contentRef: 'ref-1' }] }]);
    const capped = resultEntry('log line 0\n[truncated, 9000 tokens omitted]\nlog line 2999');
    expect(t.input(req([capped]), true).delta).toEqual([capped]);
  });
});
