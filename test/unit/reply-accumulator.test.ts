import Anthropic from '@anthropic-ai/sdk';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { ReplyAccumulator, type RawStreamEvent } from '../../src/activities/models/anthropic/reply-accumulator';
import { sseEventsFor } from '../../src/testing/anthropic/fake-anthropic-sse';

/** The SDK's own accumulation of these events (MessageStream reads newline-delimited JSON events). */
async function sdkFinal(events: unknown[], beta: boolean): Promise<unknown> {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(events.map((e) => JSON.stringify(e)).join('\n') + '\n'));
      c.close();
    },
  });
  const final = (await (beta ? BetaMessageStream.fromReadableStream(body).finalMessage() : MessageStream.fromReadableStream(body).finalMessage())) as unknown as Record<string, unknown>;
  // What the SDK's structured-output helper adds (null: no output format was asked for); resultOf never reads it.
  const { parsed_output: _parsed, ...rest } = final;
  return rest;
}

function ours(events: unknown[]): unknown {
  const reply = new ReplyAccumulator();
  for (const e of events) reply.add(e as RawStreamEvent);
  return reply.final();
}

const usage = { input_tokens: 120, output_tokens: 30, cache_creation_input_tokens: 5, cache_read_input_tokens: 100 };
const message = (content: unknown[], extra: Record<string, unknown> = {}): Anthropic.Message =>
  ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason: 'end_turn', stop_sequence: null, usage, ...extra }) as unknown as Anthropic.Message;

/** Every kind of block the fake server streams, alone and together, cut in several chunk sizes. */
const replies: Array<[string, Anthropic.Message]> = [
  ['text', message([{ type: 'text', text: 'Hello streaming world, with ünïcödé and 🙂 emoji', citations: null }])],
  ['empty text', message([{ type: 'text', text: '', citations: null }])],
  ['thinking, signature, text', message([{ type: 'thinking', thinking: 'Let me think about it step by step.', signature: 'sig-abc' }, { type: 'text', text: 'Done.', citations: null }])],
  ['redacted thinking', message([{ type: 'redacted_thinking', data: 'opaque-bytes' }, { type: 'text', text: 'ok', citations: null }])],
  [
    'tool calls',
    message(
      [
        { type: 'text', text: 'Calling two tools.', citations: null },
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'src/a.ts', range: [1, 20], nested: { deep: [true, null, 'x\n"y"'] } } },
        { type: 'tool_use', id: 'toolu_2', name: 'noop', input: {} },
      ],
      { stop_reason: 'tool_use' },
    ),
  ],
  ['compaction block', message([{ type: 'compaction', content: 'Summary so far.', encrypted_content: 'enc', signature: 'sig' }, { type: 'text', text: 'Next.', citations: null }])],
  [
    'context management',
    message([{ type: 'text', text: 'After clearing.', citations: null }], {
      context_management: { applied_edits: [{ type: 'clear_tool_uses_20250919', cleared_input_tokens: 1200, cleared_tool_uses: 3 }] },
    }),
  ],
  ['max tokens', message([{ type: 'text', text: 'cut off here', citations: null }], { stop_reason: 'max_tokens' })],
];

describe('ReplyAccumulator: a streamed reply put together as the SDK does', () => {
  for (const [name, m] of replies) {
    for (const chunk of [1, 3, 8, 1000]) {
      it(`${name}, ${chunk} characters a delta: equal to MessageStream.finalMessage()`, async () => {
        const events = sseEventsFor(m, chunk).map((e) => e.data);
        const beta = (m as unknown as { context_management?: unknown }).context_management !== undefined || m.content.some((b) => b.type === ('compaction' as string));
        expect(ours(events)).toEqual(await sdkFinal(events, beta));
        if (!beta) expect(ours(events)).toEqual(await sdkFinal(events, true));
      });
    }
  }

  it('a tool input cut off mid-JSON (max_tokens) parses as far as it goes, as the SDK does', async () => {
    const m = message([{ type: 'tool_use', id: 'toolu_1', name: 'write_file', input: { path: 'a.txt', content: 'long text' } }], { stop_reason: 'max_tokens' });
    const events = sseEventsFor(m, 4).map((e) => e.data);
    // Drop the last input deltas: the JSON ends inside the content string.
    const lastDelta = events.map((e, i) => ((e as { type: string }).type === 'content_block_delta' ? i : -1)).filter((i) => i >= 0);
    const cut = events.filter((_, i) => !lastDelta.slice(-2).includes(i));
    expect(ours(cut)).toEqual(await sdkFinal(cut, false));
    expect((ours(cut) as Anthropic.Message).content[0]).toMatchObject({ type: 'tool_use', input: { path: 'a.txt' } });
  });

  it("message_delta's whole-message usage totals replace message_start's, as in the SDK", async () => {
    const events = sseEventsFor(message([{ type: 'text', text: 'counted', citations: null }])).map((e) => e.data);
    const delta = events.find((e) => (e as { type: string }).type === 'message_delta') as { usage: Record<string, unknown> };
    delta.usage = { output_tokens: 40, input_tokens: 130, cache_read_input_tokens: 90, cache_creation_input_tokens: null, server_tool_use: { web_search_requests: 1 } };
    expect(ours(events)).toEqual(await sdkFinal(events, false));
    expect((ours(events) as Anthropic.Message).usage).toMatchObject({ output_tokens: 40, input_tokens: 130, cache_read_input_tokens: 90, cache_creation_input_tokens: 5 });
  });

  it('a stream that ends without message_stop is an error, as finalMessage() says', async () => {
    const events = sseEventsFor(message([{ type: 'text', text: 'partial', citations: null }])).map((e) => e.data);
    const cut = events.slice(0, -1);
    expect(() => ours(cut)).toThrow('stream ended without producing a Message with role=assistant');
    await expect(sdkFinal(cut, false)).rejects.toThrow('stream ended without producing a Message with role=assistant');
  });
});
