/**
 * Our request as a Chat Completions request: the system prompt as a `system` message, tools as
 * function tools, each tool call on its assistant message's `tool_calls`, each tool result as a
 * `tool` message naming its call, user text as `user` messages. Thinking is a `reasoning_effort` for
 * models that take one; a model that does not is refused (never a budget silently dropped).
 */
import type { ChatCompletionCreateParamsStreaming, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { toApiMessages } from '../../../core/entries';
import { ModelCallError } from '../../../core/errors';
import type { MessagesCall } from '../port';
import { effortFor } from './reasoning';

export interface ChatDialect {
  /** The output limit's field (OpenAI: max_completion_tokens; compatible servers: max_tokens). */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Whether `model` takes `reasoning_effort`. */
  reasons: (model: string) => boolean;
  /** Names the API in errors. */
  label: string;
}

/** OpenAI's reasoning models: the o-series and gpt-5 (gpt-4.1 and gpt-4o take no reasoning effort). */
export const OPENAI_REASONING_MODEL = /^(o\d|gpt-5)/;

function chatMessages(call: MessagesCall): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = call.system ? [{ role: 'system', content: call.system }] : [];
  for (const message of toApiMessages(call.entries)) {
    if (message.role === 'user') {
      const texts: string[] = [];
      for (const block of message.content) {
        if (block.type === 'tool_result') {
          out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${block.content}` : block.content });
        } else if (block.type === 'text') texts.push(block.text);
      }
      if (texts.length) out.push({ role: 'user', content: texts.join('\n\n') });
      continue;
    }
    const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    const calls = message.content.flatMap((b) =>
      b.type === 'tool_use' ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }] : [],
    );
    // Thinking (Anthropic's signed blocks, OpenAI's encrypted items) has no place in Chat Completions: not sent.
    if (!text && !calls.length) continue;
    out.push({ role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) });
  }
  return out;
}

function chatTools(call: MessagesCall): ChatCompletionTool[] {
  return call.tools.map((t) => ({
    type: 'function' as const,
    function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema as Record<string, unknown> },
  }));
}

/** @internal Typed by the `openai` SDK (an optional peer): stripped from the published declarations. */
export function chatParams(call: MessagesCall, dialect: ChatDialect): ChatCompletionCreateParamsStreaming {
  if (call.thinking && !dialect.reasons(call.model)) {
    throw new ModelCallError(
      'invalid_request',
      `${dialect.label}: model '${call.model}' takes no reasoning effort on this connection: turn thinking off for it` +
        ` (an OpenAI-compatible connection sends it only with reasoningEffort: true).`,
    );
  }
  const tools = chatTools(call);
  const limit = call.thinking ? call.thinking.budgetTokens + call.maxTokens : call.maxTokens;
  return {
    model: call.model,
    messages: chatMessages(call),
    ...(tools.length ? { tools } : {}),
    ...(dialect.maxTokensField === 'max_tokens' ? { max_tokens: limit } : { max_completion_tokens: limit }),
    ...(call.thinking ? { reasoning_effort: effortFor(call.thinking.budgetTokens) } : {}),
    stream: true,
    stream_options: { include_usage: true },
  };
}
