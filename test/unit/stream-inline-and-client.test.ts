/**
 * Streaming without Temporal: inline runs deliver a model call's deltas through onEvent (a retried
 * attempt announced, its partial output dropped by a client), the client's CallAssembly catches a
 * reply up from message_end, and the workflow's StreamLog keeps offsets and blocks.
 */
import { init, type AgentEvent } from '@fabric-harness/sdk';
import { CallAssembly, type StreamEvent } from '@fabric-harness/sdk/client';
import { FakeAnthropicServer, say } from '@fabric-harness/sdk/testing';
import { StreamLog, STREAM_BLOCK_SIZE } from '../../src/workflows/stream/log';
import { savedAnthropicEnv } from '../support/anthropic-env';

describe('inline streaming through onEvent', () => {
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    env.pointAt(fake.url);
  });
  afterAll(async () => {
    await fake.stop();
    env.restore();
  });

  it('delivers text deltas as they arrive; a retried attempt voids the first one; message_end is the reply', async () => {
    const events: AgentEvent[] = [];
    const session = await (await init({ contextWindowTokens: 100_000, onEvent: (e) => events.push(e) })).session();
    fake.enqueue(say('a doomed first attempt', { stream: { errorAfterDeltas: 2 } }), say('The reply, streamed.'));
    const reply = await session.prompt<string>('hello');
    const stream = events.filter((e): e is Extract<AgentEvent, { type: 'stream' }> => e.type === 'stream').map((e) => e.data);
    expect(stream.map((s) => s.offset)).toEqual(stream.map((_, i) => i));
    expect(stream.filter((s) => s.event.type === 'attempt_started').map((s) => s.event.attempt)).toEqual([1, 2]);
    expect(stream.filter((s) => s.event.type === 'text_delta' && s.event.attempt === 1).length).toBe(2);
    const assembly = new CallAssembly();
    for (const s of stream) if (s.event.type !== 'message_end') assembly.apply(s.event as StreamEvent);
    expect(assembly.text()).toBe(reply);
    expect(reply).toBe('The reply, streamed.');
    const end = stream.find((s) => s.event.type === 'message_end')!.event as Extract<StreamEvent, { type: 'message_end' }>;
    expect(end.content).toEqual([{ type: 'text', text: reply }]);
    expect(end.attempt).toBe(2);
  });
});

describe('CallAssembly', () => {
  const end = (content: Extract<StreamEvent, { type: 'message_end' }>['content'], attempt = 1): Extract<StreamEvent, { type: 'message_end' }> => ({
    type: 'message_end',
    callId: 'm1',
    attempt,
    model: 'm',
    stopReason: 'end_turn',
    usage: { inputTokens: 1, outputTokens: 1 },
    content,
  });

  it('yields what a reader missed of the reply (the tail of a block, a whole block)', () => {
    const a = new CallAssembly();
    a.apply({ type: 'attempt_started', kind: 'model', callId: 'm1', attempt: 1 });
    a.apply({ type: 'block_started', index: 0, block: { type: 'text' }, callId: 'm1', attempt: 1 });
    a.apply({ type: 'text_delta', index: 0, text: 'Hello wo', callId: 'm1', attempt: 1 });
    const missing = a.catchUp(end([{ type: 'text', text: 'Hello world' }, { type: 'tool_use', id: 't', name: 'read', input: { p: 1 } }]));
    expect(missing.map((e) => e.type)).toEqual(['text_delta', 'block_stopped', 'block_started', 'tool_input_delta', 'block_stopped']);
    expect(a.text()).toBe('Hello world');
    expect((missing[3] as { partialJson: string }).partialJson).toBe('{"p":1}');
  });

  it('starts over when the reply came from an attempt it did not follow', () => {
    const a = new CallAssembly();
    a.apply({ type: 'attempt_started', kind: 'model', callId: 'm1', attempt: 1 });
    a.apply({ type: 'text_delta', index: 0, text: 'PARTIAL', callId: 'm1', attempt: 1 });
    const missing = a.catchUp(end([{ type: 'text', text: 'final' }], 2));
    expect(missing[0]).toMatchObject({ type: 'attempt_started', attempt: 2 });
    expect(a.text()).toBe('final');
  });

  it('drops an attempt that a newer one replaces', () => {
    const a = new CallAssembly();
    a.apply({ type: 'text_delta', index: 0, text: 'old', callId: 'm1', attempt: 1 });
    a.apply({ type: 'attempt_started', kind: 'model', callId: 'm1', attempt: 2 });
    a.apply({ type: 'text_delta', index: 0, text: 'new', callId: 'm1', attempt: 2 });
    expect(a.text()).toBe('new');
  });
});

describe('StreamLog', () => {
  it('assigns growing offsets, reserves a block per call, and pages from any offset', () => {
    const log = new StreamLog(10);
    log.messageId = 'msg';
    expect(log.publish({ type: 'status', status: 'in-progress' })).toBe(10);
    const slot = log.open('model')!;
    expect(slot).toEqual({ callId: `m11`, from: 11, to: 11 + STREAM_BLOCK_SIZE, messageId: 'msg' });
    const after = log.publish({ type: 'title', title: 't' });
    expect(after).toBe(slot.to);
    let page = log.read(11);
    expect(page.events.map((e) => e.offset)).toEqual([after]);
    expect(page.blocks).toEqual([{ callId: 'm11', kind: 'model', from: 11, to: slot.to, closed: false, messageId: 'msg' }]);
    log.close('m11');
    page = log.read(0);
    expect(page.events.map((e) => e.event.messageId)).toEqual(['msg', 'msg']);
    expect(page.blocks[0]!.closed).toBe(true);
    expect(page.next).toBe(after + 1);
    expect(log.read(after + 1).events).toEqual([]);
  });
});
