/**
 * The serialised-prefix request body (src/activities/models/anthropic/request-body.ts) must be byte for byte what a fresh
 * serialisation of the whole request gives: over random conversations grown call by call, and on the
 * wire, as the Anthropic SDK sends it (plain, beta and streamed), against what the SDK sends from the
 * params object.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import Anthropic from '@anthropic-ai/sdk';
import type { AssistantBlock, Entry } from '../../src/core/entries';
import { callMessages, streamMessages, type MessagesCall } from '../../src/activities/models/anthropic/messages';
import { RequestBodies, wholeBody } from '../../src/activities/models/anthropic/request-body';

const text = fc.oneof(
  { weight: 5, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '\n\n', ' x \n', 'ends with space ') },
);
const id = fc.string({ minLength: 1, maxLength: 6 });
const block: fc.Arbitrary<AssistantBlock> = fc.oneof(
  { weight: 4, arbitrary: text.map((t) => ({ type: 'text' as const, text: t })) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('tool_use' as const), id, name: id, input: fc.jsonValue() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('thinking' as const), thinking: text, signature: id }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('redacted_thinking' as const), data: id }) },
);
const entry: fc.Arbitrary<Entry> = fc.oneof(
  { weight: 3, arbitrary: text.map((t): Entry => ({ type: 'user', text: t })) },
  { weight: 4, arbitrary: fc.array(block, { maxLength: 4 }).map((content): Entry => ({ type: 'assistant', content, stopReason: 'end_turn' })) },
  {
    weight: 3,
    arbitrary: fc
      .array(fc.record({ type: fc.constant('tool_result' as const), tool_use_id: id, content: text, is_error: fc.option(fc.boolean(), { nil: undefined }) }), { minLength: 1, maxLength: 3 })
      .map((results): Entry => ({ type: 'tool_results', results })),
  },
);
const shape = fc.record({
  system: fc.option(text, { nil: undefined }),
  tools: fc.array(fc.record({ name: id, description: text, input_schema: fc.constant({ type: 'object' as const, properties: {} }) }), { maxLength: 2 }),
  cache: fc.option(fc.constantFrom({ ttl: '5m' as const }, { ttl: '1h' as const }), { nil: undefined }),
  thinking: fc.option(fc.record({ budgetTokens: fc.integer({ min: 1024, max: 4096 }) }), { nil: undefined }),
  contextManagement: fc.option(fc.constant({ betas: ['context-management-2025-06-27'], edits: [{ type: 'clear_tool_uses_20250919' }] }), { nil: undefined }),
  stream: fc.boolean(),
});
/** One model call: the entries the workflow adds before it (tool results, a user prompt), the reply, and whether the worker lost its cache. */
const step = fc.record({ added: fc.array(entry, { maxLength: 3 }), reply: entry, evicted: fc.boolean() });

type Shape = typeof shape extends fc.Arbitrary<infer T> ? T : never;

function callOf(s: Shape, entries: Entry[]): MessagesCall {
  return { model: 'claude-test', maxTokens: 1000, tools: s.tools as MessagesCall['tools'], entries, system: s.system || undefined, cache: s.cache, thinking: s.thinking, contextManagement: s.contextManagement as MessagesCall['contextManagement'] };
}

describe('RequestBodies', () => {
  it('sends the bytes a fresh serialisation of the whole request gives, call after call', () => {
    fc.assert(
      fc.property(shape, fc.array(step, { minLength: 1, maxLength: 25 }), (s, steps) => {
        const bodies = new RequestBodies({ cacheSize: 4 });
        let entries: Entry[] = [];
        let base: { head: string; count: number } | undefined;
        let hits = 0;
        for (const [i, st] of steps.entries()) {
          entries = [...entries, ...st.added];
          if (entries.length === 0) continue;
          const call = callOf(s, entries);
          const sizeBefore = bodies.size;
          const body = bodies.encode(call, s.stream, st.evicted ? undefined : base);
          if (base && !st.evicted && sizeBefore > 0) hits++;
          expect(Buffer.concat(body.chunks).toString('utf8')).toBe(JSON.stringify(wholeBody(call, s.stream)));
          const head = `head-${i}`;
          body.remember(head, st.reply);
          entries = [...entries, st.reply];
          base = { head, count: entries.length };
        }
        return hits >= 0;
      }),
      { numRuns: 400 },
    );
  });

  it('serialises only the new entries on a hit: the kept prefix is reused, not rebuilt', () => {
    const bodies = new RequestBodies();
    const big = 'x'.repeat(10_000);
    const entries: Entry[] = [{ type: 'user', text: big }];
    const first = bodies.encode(callOf({ tools: [], stream: false } as never, entries), false);
    const reply: Entry = { type: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'grow', input: {} }] };
    first.remember('h1', reply);
    const next = [...entries, reply, { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] } as Entry];
    // The old entry's text is not serialised again: altering it in the (content-addressed, so never
    // altered in practice) entries shows the kept bytes were used.
    const altered = [{ type: 'user', text: 'y'.repeat(10_000) } as Entry, ...next.slice(1)];
    const body = bodies.encode(callOf({ tools: [], stream: false } as never, altered), false, { head: 'h1', count: 2 });
    expect(Buffer.concat(body.chunks).toString('utf8')).toContain(big);
    expect(Buffer.concat(body.chunks).toString('utf8')).toBe(JSON.stringify(wholeBody(callOf({ tools: [], stream: false } as never, next), false)));
    // A count that does not match the kept prefix is a miss: the whole request is serialised.
    const miss = bodies.encode(callOf({ tools: [], stream: false } as never, altered), false, { head: 'h1', count: 1 });
    expect(Buffer.concat(miss.chunks).toString('utf8')).not.toContain(big);
  });

  it('two calls from one kept prefix (a retried or rolled-back call) each get their own bytes', () => {
    const bodies = new RequestBodies();
    const shape0 = { tools: [], stream: false } as never;
    const start: Entry[] = [{ type: 'user', text: 'a'.repeat(10) }, { type: 'assistant', content: [{ type: 'text', text: 'zero' }] }, { type: 'user', text: 'b' }];
    bodies.encode(callOf(shape0, start), false).remember('A', { type: 'assistant', content: [{ type: 'text', text: 'one' }] });
    const atA: Entry[] = [...start, { type: 'assistant', content: [{ type: 'text', text: 'one' }] }];
    const branch = (text: string): Entry[] => [...atA, { type: 'user', text }];
    const first = bodies.encode(callOf(shape0, branch('left')), false, { head: 'A', count: 4 });
    const second = bodies.encode(callOf(shape0, branch('right')), false, { head: 'A', count: 4 });
    const reply = (t: string): Entry => ({ type: 'assistant', content: [{ type: 'text', text: t }] });
    first.remember('L', reply('l'));
    second.remember('R', reply('r'));
    for (const [key, side] of [['L', 'left'], ['R', 'right']] as const) {
      const entries = [...branch(side), reply(side[0]!), { type: 'user', text: 'more' } as Entry];
      const body = bodies.encode(callOf(shape0, entries), false, { head: key, count: 6 });
      expect(Buffer.concat(body.chunks).toString('utf8')).toBe(JSON.stringify(wholeBody(callOf(shape0, entries), false)));
    }
  });

  it('keeps at most cacheSize conversations, and none with 0', () => {
    const bodies = new RequestBodies({ cacheSize: 2 });
    for (const k of ['a', 'b', 'c']) bodies.encode(callOf({ tools: [], stream: false } as never, [{ type: 'user', text: k }]), false).remember(k, { type: 'assistant', content: [] });
    expect(bodies.size).toBe(2);
    const none = new RequestBodies({ cacheSize: 0 });
    none.encode(callOf({ tools: [], stream: false } as never, [{ type: 'user', text: 'a' }]), false).remember('a', { type: 'assistant', content: [] });
    expect(none.size).toBe(0);
    expect(() => new RequestBodies({ cacheSize: -1 })).toThrow(/cacheSize/);
  });
});

describe('the SDK sends the serialised body verbatim', () => {
  let server: http.Server;
  let received: { body: string; contentType?: string; beta?: string; length?: string; chunked?: string }[];
  let client: Anthropic;
  const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };

  beforeAll(async () => {
    received = [];
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        received.push({ body, contentType: req.headers['content-type'], beta: req.headers['anthropic-beta'] as string | undefined, length: req.headers['content-length'], chunked: req.headers['transfer-encoding'] });
        if (JSON.parse(body).stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const ev = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
          ev('message_start', { message: { ...message, content: [] } });
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hi' } });
          ev('content_block_stop', { index: 0 });
          ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
          ev('message_stop', {});
          res.end();
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(message));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    client = new Anthropic({ apiKey: 'k', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxRetries: 0 });
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const entries: Entry[] = [
    { type: 'user', text: 'grow ☃ "quoted" \u2028' },
    { type: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }, { type: 'tool_use', id: 't1', name: 'grow', input: { n: 1 } }] },
    { type: 'tool_results', results: [{ type: 'tool_result', tool_use_id: 't1', content: 'grown ' }] },
  ];
  const variants: [string, Partial<MessagesCall>][] = [
    ['plain', {}],
    ['cached, thinking', { cache: { ttl: '1h' }, thinking: { budgetTokens: 2000 }, system: 'sys' }],
    ['beta context management', { contextManagement: { betas: ['context-management-2025-06-27'], edits: [{ type: 'clear_tool_uses_20250919' }] } as unknown as MessagesCall['contextManagement'] }],
  ];

  it.each(variants)('%s: the same bytes, content type and headers as from the params object', async (_name, extra) => {
    for (const stream of [false, true]) {
      const bodies = new RequestBodies();
      const call: MessagesCall = { model: 'claude-test', maxTokens: 1000, tools: [{ name: 'grow', description: 'g', input_schema: { type: 'object', properties: {} } }], entries: entries.slice(0, 1), ...extra };
      const first = bodies.encode(call, stream);
      first.remember('h1', entries[1]!);
      const next = { ...call, entries };
      const sent = bodies.encode(next, stream, { head: 'h1', count: 2 });
      received = [];
      const send = (body?: typeof sent) => (stream ? streamMessages(client, next, () => undefined, undefined, body) : callMessages(client, next, undefined, body));
      const fresh = await send();
      const cached = await send(sent);
      expect(cached).toEqual(fresh);
      expect(received).toHaveLength(2);
      expect(received[1]!.body).toBe(received[0]!.body);
      expect(received[1]!.contentType).toBe(received[0]!.contentType);
      expect(received[1]!.beta).toBe(received[0]!.beta);
      // Framed like the SDK's own body: with its length, not chunked.
      expect(received[1]!.length).toBe(received[0]!.length);
      expect(received[1]!.chunked).toBeUndefined();
      expect(JSON.parse(received[1]!.body).stream === true).toBe(stream);
    }
  });
});
