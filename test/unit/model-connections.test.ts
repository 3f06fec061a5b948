/**
 * Model connections, below the runtimes: the ports a session runs on name its connection on every
 * model-using call (and leave the default unnamed), and the model service refuses what a connection's
 * provider cannot do, by name, before any call.
 */
import { ConnectionRoute, routedPorts } from '../../src/core/connection-route';
import type { RuntimePorts } from '../../src/core/ports';
import { parseCompactionSettings } from '../../src/core/context/settings';
import { ModelService, type AroundCall } from '../../src/activities/models/model-service';
import type { MessagesCall, ModelProvider, ProviderCapabilities } from '../../src/activities/models/port';
import { CapabilityUnsupportedError } from '../../src/activities/models/capabilities';

function recordingPorts(): { ports: RuntimePorts; calls: Array<[string, unknown]> } {
  const calls: Array<[string, unknown]> = [];
  const ports = {
    runtime: 'inline',
    callModel: (req: unknown) => (calls.push(['callModel', req]), Promise.resolve({} as never)),
    decideThenCallModel: (req: unknown) => (calls.push(['decideThenCallModel', req]), Promise.resolve({} as never)),
    summarize: (req: unknown) => (calls.push(['summarize', req]), Promise.resolve({ text: '', usage: { inputTokens: 0, outputTokens: 0 } })),
    resolveModel: (model: unknown, options: unknown) => (calls.push(['resolveModel', options]), Promise.resolve({ model: String(model) })),
    memory: {
      agentName: 'agent-x',
      load: () => Promise.resolve(undefined),
      flush: (req: unknown) => (calls.push(['flush', req]), Promise.resolve({ text: '', hash: '', tokens: 0 })),
    },
  } as unknown as RuntimePorts;
  return { ports, calls };
}

const modelReq = { sessionId: 's', model: 'm1', maxTokens: 10, tools: [], entries: [] };
const summaryReq = { sessionId: 's', model: 'm1', system: 'sys', userText: 'u', maxTokens: 10 };
const flushReq = { sessionId: 's', key: 'k', maxTokens: 10, model: 'm1', reason: 'threshold' as const, entries: [], dropped: 0 };

async function everyCall(ports: RuntimePorts): Promise<void> {
  await ports.callModel(modelReq);
  await ports.decideThenCallModel(modelReq, {} as never);
  await ports.summarize(summaryReq);
  await ports.resolveModel('m1', {});
  await ports.memory!.flush(flushReq);
}

describe('routedPorts', () => {
  it('names the connection on every model call, summary, model lookup and memory flush', async () => {
    const { ports, calls } = recordingPorts();
    const routed = routedPorts(ports, new ConnectionRoute('alt'));
    await everyCall(routed);
    expect(calls.map(([name, req]) => [name, (req as { connection?: string }).connection])).toEqual([
      ['callModel', 'alt'],
      ['decideThenCallModel', 'alt'],
      ['summarize', 'alt'],
      ['resolveModel', 'alt'],
      ['flush', 'alt'],
    ]);
    expect(routed.memory!.agentName).toBe('agent-x');
  });

  it.each([undefined, 'anthropic'])('leaves the default connection (%s) unnamed, so requests are what they were', async (connection) => {
    const { ports, calls } = recordingPorts();
    await everyCall(routedPorts(ports, new ConnectionRoute(connection)));
    for (const [, req] of calls) expect(req).not.toHaveProperty('connection');
  });

  it('follows a connection changed after the ports were made (a session before its first message)', async () => {
    const { ports, calls } = recordingPorts();
    const route = new ConnectionRoute(undefined);
    const routed = routedPorts(ports, route);
    route.connection = 'alt';
    await routed.callModel(modelReq);
    expect(calls[0]![1]).toMatchObject({ connection: 'alt' });
  });

  it('sends summaries and memory flushes to compaction.summaryConnection (with summaryModel) and model calls to the session', async () => {
    const { ports, calls } = recordingPorts();
    await everyCall(routedPorts(ports, new ConnectionRoute('alt', { connection: 'cheap', model: 'small-1' })));
    const by = Object.fromEntries(calls.map(([name, req]) => [name, req as { connection?: string; model?: string }]));
    expect(by.callModel).toMatchObject({ connection: 'alt', model: 'm1' });
    expect(by.summarize).toMatchObject({ connection: 'cheap', model: 'small-1' });
    expect(by.flush).toMatchObject({ connection: 'cheap', model: 'small-1' });
  });

  it('checks summaryConnection as a connection name', () => {
    expect(parseCompactionSettings({ summaryConnection: 'cheap', summaryModel: 'small-1' })).toEqual({ summaryConnection: 'cheap', summaryModel: 'small-1' });
    expect(() => parseCompactionSettings({ summaryConnection: 'not a name' })).toThrow(/summaryConnection/);
  });
});

describe('ModelService and a connection', () => {
  const around: AroundCall = (fn) => fn();
  const signal = new AbortController().signal;
  const caps = (over: Partial<ProviderCapabilities> = {}): ProviderCapabilities => ({
    thinking: false,
    promptCaching: 'none',
    tokenCounting: false,
    serverContextEditing: false,
    thinkingSignatures: false,
    ...over,
  });
  function serviceWith(capabilities: ProviderCapabilities) {
    const calls: MessagesCall[] = [];
    const provider: ModelProvider = {
      protocol: 'openai-chat',
      capabilities,
      call: async (call) => {
        calls.push(call);
        return { entry: { type: 'assistant', content: [{ type: 'text', text: 'ok' }] }, usage: { inputTokens: 1, outputTokens: 1 }, stopReason: 'end_turn', model: call.model };
      },
      modelFacts: async () => ({ contextWindowTokens: 1000 }),
      verifyModel: async () => undefined,
    };
    const service = new ModelService({ connection: { apiKey: 'k' } });
    const asked: Array<string | undefined> = [];
    jest.spyOn(service, 'provider').mockImplementation((connection) => (asked.push(connection), provider));
    return { service, calls, asked };
  }
  const call: MessagesCall = { model: 'gpt-x', maxTokens: 10, tools: [], entries: [{ type: 'user', text: 'hi' }] };

  it('calls the named connection and answers a plain request', async () => {
    const { service, calls, asked } = serviceWith(caps());
    expect((await service.callModel(call, signal, around, 'openai')).model).toBe('gpt-x');
    expect(asked).toEqual(['openai']);
    expect(calls).toHaveLength(1);
  });

  it.each([
    ['thinking', { ...call, thinking: { budgetTokens: 2048 } }, /connection 'openai' \(openai-chat\) has no thinking/],
    ['serverContextEditing', { ...call, contextManagement: { edits: [] } as never }, /connection 'openai' \(openai-chat\) has no server-side context editing/],
  ])('refuses %s on a provider without it, before any call', async (capability, request, message) => {
    const { service, calls } = serviceWith(caps());
    const err = await service.callModel(request, signal, around, 'openai').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CapabilityUnsupportedError);
    expect(err).toMatchObject({ code: 'CAPABILITY_UNSUPPORTED', capability, connection: 'openai' });
    expect((err as Error).message).toMatch(message);
    expect(calls).toHaveLength(0);
    // The same through decideThenCall (the path with a compaction decision and a streaming invoke).
    const invoked: MessagesCall[] = [];
    const decided = await service.decideThenCall(undefined, async () => request, () => signal, around, async (c) => (invoked.push(c), ({} as never)), 'openai').catch((e: unknown) => e);
    expect(decided).toBeInstanceOf(CapabilityUnsupportedError);
    expect(invoked).toHaveLength(0);
  });

  it('sends thinking where the provider has it', async () => {
    const { service, calls } = serviceWith(caps({ thinking: true }));
    await service.callModel({ ...call, thinking: { budgetTokens: 2048 } }, signal, around, 'openai');
    expect(calls[0]!.thinking).toEqual({ budgetTokens: 2048 });
  });

  it("refuses the exact-count estimator on a connection with no count endpoint", async () => {
    const { service } = serviceWith(caps());
    const facts = { settings: { estimator: 'count-tokens' }, trigger: 'threshold' } as never;
    const err = await service.decideThenCall(facts, async () => call, () => signal, around, undefined, 'openai').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAPABILITY_UNSUPPORTED', capability: 'tokenCounting' });
  });

  it("chooses client compaction for strategy 'auto' on a provider without server-side editing, and refuses 'server'", async () => {
    const { service } = serviceWith(caps());
    const auto = await service.resolveModel({ model: 'gpt-x', strategy: 'auto', connection: 'openai' }, around);
    expect(auto).toMatchObject({ model: 'gpt-x', contextWindowTokens: 1000, strategy: { strategy: 'client', setting: 'auto' } });
    expect(auto.strategy!.why).toMatch(/connection 'openai' \(openai-chat\) has no server-side context editing/);
    const server = await service.resolveModel({ model: 'gpt-x', strategy: 'server', connection: 'openai' }, around).catch((e: unknown) => e);
    expect(server).toMatchObject({ code: 'CAPABILITY_UNSUPPORTED', capability: 'serverContextEditing', connection: 'openai' });
  });

  it("refuses a connection it lacks with UNKNOWN_CONNECTION naming the ones it has", async () => {
    const service = new ModelService({ connection: { apiKey: 'k' }, connections: { alt: { provider: 'anthropic', baseURL: 'http://127.0.0.1:1' } } });
    const err = await service.resolveModel({ model: 'm', connection: 'azure' }, around).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'UNKNOWN_CONNECTION', connection: 'azure', known: ['alt', 'anthropic', 'bedrock', 'google', 'openai', 'vertex'] });
    expect((err as Error).message).toMatch(/no connection 'azure'; this worker has: alt, anthropic, bedrock, google, openai, vertex/);
  });
});
