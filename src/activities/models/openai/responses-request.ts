/**
 * Our request (system, tools, entries, thinking, output limit) as a Responses API request: the system
 * prompt as `instructions`, tools as function tools, each user message as a `user` message item, each
 * tool result as a `function_call_output`, each tool call as a `function_call`, the reply's text as an
 * `assistant` message and its encrypted reasoning as a `reasoning` item. `store: false`: the
 * conversation lives in our history, never on OpenAI's side.
 */
import type { ResponseCreateParamsStreaming, ResponseInputItem, Tool } from 'openai/resources/responses/responses';
import { toApiMessages } from '../../../core/entries';
import type { MessagesCall } from '../port';
import { effortFor, openReasoning } from './reasoning';

function responsesInput(call: MessagesCall): ResponseInputItem[] {
  const input: ResponseInputItem[] = [];
  for (const message of toApiMessages(call.entries)) {
    if (message.role === 'user') {
      const texts: string[] = [];
      for (const block of message.content) {
        if (block.type === 'tool_result') {
          const output = block.is_error ? `Error: ${block.content}` : block.content;
          input.push({ type: 'function_call_output', call_id: block.tool_use_id, output });
        } else if (block.type === 'text') texts.push(block.text);
      }
      if (texts.length) input.push({ role: 'user', content: texts.map((text) => ({ type: 'input_text' as const, text })) });
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'text') input.push({ role: 'assistant', content: block.text });
      else if (block.type === 'tool_use') input.push({ type: 'function_call', call_id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
      else if (block.type === 'redacted_thinking') {
        const item = openReasoning(block.data);
        if (item) input.push({ type: 'reasoning', id: item.id, summary: [], encrypted_content: item.encrypted_content });
      }
      // Anthropic's signed thinking and server compaction blocks mean nothing to OpenAI: not sent.
    }
  }
  return input;
}

function responsesTools(call: MessagesCall): Tool[] {
  return call.tools.map((t) => ({
    type: 'function' as const,
    name: t.name,
    description: t.description,
    parameters: t.input_schema as Record<string, unknown>,
    // Not strict: strict mode demands every property required and no additional ones, which our schemas do not promise.
    strict: false,
  }));
}

/** @internal Typed by the `openai` SDK (an optional peer): stripped from the published declarations. */
export function responsesParams(call: MessagesCall): ResponseCreateParamsStreaming {
  const tools = responsesTools(call);
  return {
    model: call.model,
    ...(call.system ? { instructions: call.system } : {}),
    input: responsesInput(call),
    ...(tools.length ? { tools } : {}),
    // Reasoning tokens count against max_output_tokens: the budget is added, as on the Anthropic path.
    max_output_tokens: call.thinking ? call.thinking.budgetTokens + call.maxTokens : call.maxTokens,
    ...(call.thinking ? { reasoning: { effort: effortFor(call.thinking.budgetTokens) }, include: ['reasoning.encrypted_content' as const] } : {}),
    store: false,
    stream: true,
  };
}
