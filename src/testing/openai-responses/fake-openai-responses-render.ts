/**
 * A planned reply as the Responses API gives it: the `response` object (non-streamed), and the exact
 * event sequence a streamed one is (response.created, response.in_progress, then per output item
 * response.output_item.added, response.content_part.added, response.output_text.delta…,
 * response.output_text.done, response.content_part.done — or response.function_call_arguments.delta…
 * and .done — response.output_item.done; then response.completed, or response.incomplete at the
 * output limit), each with its sequence_number.
 */
import { countFakeTextTokens } from '../anthropic/fake-anthropic-validate';
import { pieces, type SseOut } from '../openai-common/fake-openai-server';
import type { PlannedReply } from '../openai-common/fake-openai-plan';

/** What the fake seals a reasoning item's text into (and checks when the item comes back). */
export const FAKE_ENCRYPTED_PREFIX = 'fakeenc_';

export interface ResponseContext {
  id: string;
  model: string;
  createdAt: number;
  /** The request's echoed fields (instructions, tools, max_output_tokens, reasoning, store, …). */
  echo: Record<string, unknown>;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  /** The request asked for `reasoning.encrypted_content`. */
  encrypted: boolean;
  ids: () => string;
}

type Item = Record<string, unknown> & { type: string; id: string };

export function outputItems(reply: PlannedReply, ctx: ResponseContext): Item[] {
  const refusal = reply.stop === 'refusal';
  return reply.items.map((i): Item => {
    if (i.kind === 'reasoning') {
      return {
        id: `rs_${ctx.ids()}`,
        type: 'reasoning',
        summary: [],
        ...(ctx.encrypted ? { encrypted_content: FAKE_ENCRYPTED_PREFIX + Buffer.from(i.text).toString('base64') } : {}),
      };
    }
    if (i.kind === 'tool') return { id: `fc_${ctx.ids()}`, type: 'function_call', status: 'completed', call_id: i.callId, name: i.name, arguments: i.arguments };
    const part = refusal ? { type: 'refusal', refusal: i.text } : { type: 'output_text', text: i.text, annotations: [], logprobs: [] };
    return { id: `msg_${ctx.ids()}`, type: 'message', status: 'completed', role: 'assistant', content: [part] };
  });
}

export function responseObject(reply: PlannedReply, ctx: ResponseContext, output: Item[], done: boolean): Record<string, unknown> {
  const incomplete = reply.stop === 'max_tokens';
  const reasoningTokens = reply.items.reduce((n, i) => n + (i.kind === 'reasoning' ? countFakeTextTokens(i.text) : 0), 0);
  return {
    id: ctx.id,
    object: 'response',
    created_at: ctx.createdAt,
    status: !done ? 'in_progress' : incomplete ? 'incomplete' : 'completed',
    background: false,
    error: null,
    incomplete_details: done && incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: null,
    max_output_tokens: null,
    model: ctx.model,
    output: done ? output : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    user: null,
    metadata: {},
    ...ctx.echo,
    usage: done
      ? {
          input_tokens: ctx.inputTokens,
          input_tokens_details: { cached_tokens: ctx.cachedTokens },
          output_tokens: ctx.outputTokens,
          output_tokens_details: { reasoning_tokens: reasoningTokens },
          total_tokens: ctx.inputTokens + ctx.outputTokens,
        }
      : null,
  };
}

export function responseEvents(reply: PlannedReply, ctx: ResponseContext, output: Item[], chunkChars: number): SseOut[] {
  let seq = 0;
  const out: SseOut[] = [];
  const push = (type: string, fields: Record<string, unknown>, delta = false) => out.push({ event: type, data: { type, sequence_number: seq++, ...fields }, delta });
  push('response.created', { response: responseObject(reply, ctx, output, false) });
  push('response.in_progress', { response: responseObject(reply, ctx, output, false) });
  output.forEach((item, output_index) => {
    if (item.type === 'message') {
      const part = (item.content as Array<Record<string, unknown>>)[0]!;
      const refusal = part.type === 'refusal';
      const text = (refusal ? part.refusal : part.text) as string;
      const item_id = item.id;
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      push('response.content_part.added', { item_id, output_index, content_index: 0, part: refusal ? { type: 'refusal', refusal: '' } : { type: 'output_text', text: '', annotations: [], logprobs: [] } });
      for (const delta of pieces(text, chunkChars)) {
        push(refusal ? 'response.refusal.delta' : 'response.output_text.delta', { item_id, output_index, content_index: 0, delta, ...(refusal ? {} : { logprobs: [] }) }, true);
      }
      push(refusal ? 'response.refusal.done' : 'response.output_text.done', { item_id, output_index, content_index: 0, ...(refusal ? { refusal: text } : { text, logprobs: [] }) });
      push('response.content_part.done', { item_id, output_index, content_index: 0, part });
    } else if (item.type === 'function_call') {
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of pieces(item.arguments as string, chunkChars)) push('response.function_call_arguments.delta', { item_id: item.id, output_index, delta }, true);
      push('response.function_call_arguments.done', { item_id: item.id, output_index, name: item.name, arguments: item.arguments });
    } else {
      push('response.output_item.added', { output_index, item: { id: item.id, type: 'reasoning', summary: [] } });
    }
    push('response.output_item.done', { output_index, item });
  });
  push(reply.stop === 'max_tokens' ? 'response.incomplete' : 'response.completed', { response: responseObject(reply, ctx, output, true) });
  return out;
}

/** The `error` event a stream cut by `errorAfterDeltas` ends with (HTTP status 200 already sent). */
export function streamErrorEvent(): SseOut {
  return { event: 'error', data: { type: 'error', code: 'server_error', message: 'The server had an error while processing your request. Sorry about that!', param: null, sequence_number: 0 } };
}
