/**
 * The web chat handler's stream, read by the AI SDK's own client code: every chunk we emit for a turn
 * (text, reasoning, tool input, approval request and answer, tool output, a retried model call, an
 * error) passes DefaultChatTransport's schema check, and readUIMessageStream assembles the message a
 * session's turn is. Part ids come from the stream, so the same turn mapped twice is the same message.
 */
import { turnChunks, type OffsetChunk } from '../../src/client/web-chat/chunks';
import { sseResponse } from '../../src/client/web-chat/sse';
import { approvalId } from '../../src/client/web-chat/protocol';
import type { StreamEnvelope, StreamEvent } from '../../src/wire/stream';
import { loadAiSdk, type UIMessage } from '../support/ai-sdk';

const M = 'web-u1';
const usage = { inputTokens: 1, outputTokens: 1 };

/** A turn: text and a tool call that needs approval, the tool, then reasoning and the answer. */
function turn(): StreamEvent[] {
  const m = { messageId: M };
  return [
    { ...m, type: 'turn_started', text: 'deploy web' },
    { ...m, type: 'attempt_started', kind: 'model', callId: 'c1', attempt: 1 },
    { ...m, type: 'block_started', callId: 'c1', index: 0, block: { type: 'text' } },
    { ...m, type: 'text_delta', callId: 'c1', index: 0, text: 'Let me ' },
    { messageId: 'web-other', type: 'text_delta', callId: 'zz', index: 0, text: 'NOT THIS MESSAGE' },
    { ...m, type: 'text_delta', callId: 'c1', index: 0, text: 'deploy.' },
    { ...m, type: 'block_stopped', callId: 'c1', index: 0 },
    { ...m, type: 'block_started', callId: 'c1', index: 1, block: { type: 'tool_use', id: 'toolu_1', name: 'deploy' } },
    { ...m, type: 'tool_input_delta', callId: 'c1', index: 1, partialJson: '{"service":' },
    { ...m, type: 'tool_input_delta', callId: 'c1', index: 1, partialJson: '"web"}' },
    { ...m, type: 'block_stopped', callId: 'c1', index: 1 },
    { ...m, type: 'message_end', callId: 'c1', model: 'm', stopReason: 'tool_use', usage, content: [{ type: 'text', text: 'Let me deploy.' }, { type: 'tool_use', id: 'toolu_1', name: 'deploy', input: { service: 'web' } }] },
    { ...m, type: 'approval_requested', callId: 'toolu_1', name: 'deploy', input: { service: 'web' } },
    { ...m, type: 'approval_decided', callId: 'toolu_1', name: 'deploy', approved: true },
    { ...m, type: 'tool_started', callId: 'toolu_1', name: 'deploy', input: { service: 'web' } },
    { ...m, type: 'tool_ended', callId: 'toolu_1', name: 'deploy', isError: false, content: 'deployed web' },
    { ...m, type: 'attempt_started', kind: 'model', callId: 'c2', attempt: 1 },
    { ...m, type: 'block_started', callId: 'c2', index: 0, block: { type: 'text' } },
    { ...m, type: 'text_delta', callId: 'c2', index: 0, text: 'A FAILED ATTEMPT' },
    // The provider failed mid-reply: the next attempt's text is the reply.
    { ...m, type: 'attempt_started', kind: 'model', callId: 'c2', attempt: 2 },
    { ...m, type: 'block_started', callId: 'c2', index: 0, block: { type: 'thinking' } },
    { ...m, type: 'thinking_delta', callId: 'c2', index: 0, thinking: 'It worked.' },
    { ...m, type: 'block_stopped', callId: 'c2', index: 0 },
    { ...m, type: 'block_started', callId: 'c2', index: 1, block: { type: 'text' } },
    { ...m, type: 'text_delta', callId: 'c2', index: 1, text: 'Web is <b>deployed</b>.' },
    { ...m, type: 'block_stopped', callId: 'c2', index: 1 },
    { ...m, type: 'message_end', callId: 'c2', model: 'm', stopReason: 'end_turn', usage, content: [{ type: 'thinking', thinking: 'It worked.' }, { type: 'text', text: 'Web is <b>deployed</b>.' }] },
    { ...m, type: 'turn_ended', reply: { text: 'Web is <b>deployed</b>.' } },
  ] as StreamEvent[];
}

async function* envelopes(events: StreamEvent[], from = 0): AsyncGenerator<StreamEnvelope> {
  for (const [i, event] of events.entries()) if (i >= from) yield { offset: i, event };
}

async function collect(it: AsyncIterable<OffsetChunk>): Promise<OffsetChunk[]> {
  const out: OffsetChunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

/** Our chunks through the AI SDK's transport (schema-checked parse) and readUIMessageStream: the message and the chunks it parsed. */
async function readWithAiSdk(chunks: AsyncIterable<OffsetChunk>): Promise<{ message: UIMessage; parsed: Array<{ type: string }> }> {
  const { DefaultChatTransport, readUIMessageStream } = await loadAiSdk();
  const response = sseResponse(chunks, () => undefined);
  const transport = new DefaultChatTransport({ api: 'http://chat.test/api/chat', fetch: async () => response });
  const stream = await transport.sendMessages({ chatId: 'c', messages: [], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
  const parsed: Array<{ type: string }> = [];
  const tee = stream.pipeThrough(new TransformStream({ transform: (c, ctl) => (parsed.push(c as { type: string }), ctl.enqueue(c)) }));
  let message: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream: tee, onError: (e) => { throw e; } })) message = m;
  return { message: message!, parsed };
}

const notPending = async () => false;

describe('web chat stream (read by the AI SDK)', () => {
  it('every chunk of a whole turn passes the AI SDK schema, and the message is the turn', async () => {
    const ours = await collect(turnChunks(envelopes(turn()), { messageId: M, replyId: `${M}-reply`, isPending: notPending }));
    const { message, parsed } = await readWithAiSdk(turnChunks(envelopes(turn()), { messageId: M, replyId: `${M}-reply`, isPending: notPending }));
    // Nothing dropped or changed on the way: the AI SDK parsed exactly what we sent.
    expect(parsed).toEqual(ours.map((c) => c.chunk));
    expect(message.id).toBe(`${M}-reply`);
    const texts = message.parts.filter((p) => p.type === 'text').map((p) => p.text);
    expect(texts).toEqual(['Let me deploy.', 'Web is <b>deployed</b>.']);
    expect(JSON.stringify(message)).not.toContain('NOT THIS MESSAGE');
    expect(JSON.stringify(message)).not.toContain('A FAILED ATTEMPT');
    expect(message.parts.find((p) => p.type === 'reasoning')?.text).toBe('It worked.');
    const tool = message.parts.find((p) => p.type === 'dynamic-tool')!;
    expect(tool).toMatchObject({ toolCallId: 'toolu_1', toolName: 'deploy', state: 'output-available', input: { service: 'web' }, output: 'deployed web', approval: { id: approvalId(12, 'toolu_1'), approved: true } });
    // Offsets ride in the SSE ids, growing.
    const offsets = ours.flatMap((c) => (c.offset === undefined ? [] : [c.offset]));
    expect([...offsets].sort((a, b) => a - b)).toEqual(offsets);
  });

  it('ends at an approval the user must give: the tool part waits with our approval id', async () => {
    const { message, parsed } = await readWithAiSdk(turnChunks(envelopes(turn()), { messageId: M, replyId: `${M}-reply`, isPending: async (id) => id === 'toolu_1' }));
    expect(parsed.at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
    expect(message.parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({ state: 'approval-requested', approval: { id: approvalId(12, 'toolu_1') } });
    expect(message.parts.filter((p) => p.type === 'text').map((p) => p.text)).toEqual(['Let me deploy.']);
  });

  it('a continuation after the approval adds the rest to the same parts (nothing twice)', async () => {
    const known = new Map([['toolu_1', approvalId(12, 'toolu_1')]]);
    const first = await collect(turnChunks(envelopes(turn()), { messageId: M, replyId: `${M}-reply`, isPending: async () => true }));
    const rest = await collect(turnChunks(envelopes(turn(), 13), { messageId: M, replyId: `${M}-reply`, isPending: notPending, continuing: true, knownApprovals: known }));
    async function* both(): AsyncGenerator<OffsetChunk> {
      // One message read from the two responses, as useChat keeps it (the second `start` names the same message).
      for (const c of first) if (c.chunk.type !== 'finish') yield c;
      yield* rest;
    }
    const { message } = await readWithAiSdk(both());
    expect(message.parts.filter((p) => p.type === 'text').map((p) => p.text)).toEqual(['Let me deploy.', 'Web is <b>deployed</b>.']);
    expect(message.parts.filter((p) => p.type === 'dynamic-tool')).toHaveLength(1);
  });

  it('a denied call is a denied part: the denial, not an error output', async () => {
    const denied = turn().map((e) =>
      e.type === 'approval_decided' ? { ...e, approved: false, note: 'not today' } : e.type === 'tool_ended' ? { ...e, isError: true, content: 'denied: not today' } : e,
    ).filter((e) => e.type !== 'tool_started');
    const { message, parsed } = await readWithAiSdk(turnChunks(envelopes(denied), { messageId: M, replyId: `${M}-reply`, isPending: notPending }));
    expect(parsed.filter((c) => c.type.startsWith('tool-output') || c.type === 'tool-approval-response')).toEqual([
      { type: 'tool-approval-response', approvalId: approvalId(12, 'toolu_1'), approved: false, reason: 'not today' },
      { type: 'tool-output-denied', toolCallId: 'toolu_1' },
    ]);
    expect(message.parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({ state: 'output-denied', approval: { approved: false, reason: 'not today' } });
  });

  it('the same turn mapped twice (a resume replays it) gives the same chunks: stable message and part ids', async () => {
    const a = await collect(turnChunks(envelopes(turn()), { messageId: M, replyId: `${M}-reply`, isPending: notPending }));
    const b = await collect(turnChunks(envelopes(turn()), { messageId: M, replyId: `${M}-reply`, isPending: notPending }));
    expect(b).toEqual(a);
  });

  it('a turn that ends in an error says so with an error chunk the AI SDK accepts', async () => {
    const events: StreamEvent[] = [
      { messageId: M, type: 'turn_started' },
      { messageId: M, type: 'turn_ended', reply: { error: { code: 'MODEL_OVERLOADED', message: 'the model is overloaded' } } },
    ];
    const chunks = await collect(turnChunks(envelopes(events), { messageId: M, replyId: `${M}-reply`, isPending: notPending }));
    expect(chunks.map((c) => c.chunk)).toEqual([
      { type: 'start', messageId: `${M}-reply` },
      { type: 'error', errorText: 'MODEL_OVERLOADED: the model is overloaded' },
      { type: 'finish', finishReason: 'error' },
    ]);
    const errors: unknown[] = [];
    const { DefaultChatTransport } = await loadAiSdk();
    const transport = new DefaultChatTransport({ api: 'http://chat.test/api/chat', fetch: async () => sseResponse(envelopesOf(chunks), () => undefined) });
    const stream = await transport.sendMessages({ chatId: 'c', messages: [], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
    for await (const c of stream as unknown as AsyncIterable<{ type: string }>) errors.push(c);
    expect(errors).toHaveLength(3);
  });
});

async function* envelopesOf(chunks: OffsetChunk[]): AsyncGenerator<OffsetChunk> {
  yield* chunks;
}
