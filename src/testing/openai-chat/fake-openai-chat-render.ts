/**
 * A planned reply as Chat Completions gives it: the `chat.completion` object (non-streamed), and the
 * exact chunk sequence a streamed one is: `chat.completion.chunk`s whose first delta carries the role,
 * then `content` pieces, then per tool call a delta `{ index, id, type, function: { name, arguments: '' } }`
 * followed by `{ index, function: { arguments } }` pieces, a last chunk with the `finish_reason`, with
 * `stream_options.include_usage` a usage chunk (`choices: []`, every earlier chunk `usage: null`), and
 * `data: [DONE]`.
 */
import { pieces, type SseOut } from '../openai-common/fake-openai-server';
import type { PlannedReply } from '../openai-common/fake-openai-plan';

export interface CompletionContext {
  id: string;
  model: string;
  created: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  includeUsage: boolean;
}

const FINISH: Record<string, string> = { tool_use: 'tool_calls', max_tokens: 'length', refusal: 'content_filter' };

export function finishReason(reply: PlannedReply): string {
  return FINISH[reply.stop] ?? 'stop';
}

function usage(ctx: CompletionContext): Record<string, unknown> {
  return {
    prompt_tokens: ctx.inputTokens,
    completion_tokens: ctx.outputTokens,
    total_tokens: ctx.inputTokens + ctx.outputTokens,
    prompt_tokens_details: { cached_tokens: ctx.cachedTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

export function completionObject(reply: PlannedReply, ctx: CompletionContext): Record<string, unknown> {
  const text = reply.items.flatMap((i) => (i.kind === 'text' ? [i.text] : [])).join('');
  const calls = reply.items.flatMap((i) => (i.kind === 'tool' ? [{ id: i.callId, type: 'function', function: { name: i.name, arguments: i.arguments } }] : []));
  const refusal = reply.stop === 'refusal';
  return {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: refusal ? null : text || (calls.length ? null : ''),
          refusal: refusal ? text : null,
          annotations: [],
          ...(calls.length ? { tool_calls: calls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(reply),
      },
    ],
    usage: usage(ctx),
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

export function completionChunks(reply: PlannedReply, ctx: CompletionContext, chunkChars: number): SseOut[] {
  const out: SseOut[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, isDelta = false) =>
    out.push({
      data: {
        id: ctx.id,
        object: 'chat.completion.chunk',
        created: ctx.created,
        model: ctx.model,
        service_tier: 'default',
        system_fingerprint: 'fp_fake',
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...(ctx.includeUsage ? { usage: null } : {}),
      },
      delta: isDelta,
    });
  const refusal = reply.stop === 'refusal';
  chunk({ role: 'assistant', content: refusal ? null : '', refusal: null });
  let toolIndex = 0;
  for (const item of reply.items) {
    if (item.kind === 'text') for (const p of pieces(item.text, chunkChars)) chunk(refusal ? { refusal: p } : { content: p }, null, true);
    else if (item.kind === 'tool') {
      const index = toolIndex++;
      chunk({ tool_calls: [{ index, id: item.callId, type: 'function', function: { name: item.name, arguments: '' } }] });
      for (const p of pieces(item.arguments, chunkChars)) chunk({ tool_calls: [{ index, function: { arguments: p } }] }, null, true);
    }
    // Reasoning is not part of Chat Completions (OpenAI's reasoning models keep it hidden).
  }
  chunk({}, finishReason(reply));
  if (ctx.includeUsage) {
    out.push({ data: { id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, service_tier: 'default', system_fingerprint: 'fp_fake', choices: [], usage: usage(ctx) } });
  }
  out.push({ data: '[DONE]' });
  return out;
}

/** How a Chat Completions stream that fails after its 200 ends: a chunk holding `error`. */
export function chatStreamError(): SseOut {
  return { data: { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } } };
}
