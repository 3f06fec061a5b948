/**
 * The floor WITH THE MODEL CALL: what a model call costs a worker before any harness. Two activities per
 * call, as ours has, doing the least a real agent must: `floorModel` sends the whole conversation to
 * the model through the Anthropic SDK (streamed, as ours streams by default) and reads the reply to its
 * end; `floorGrow` makes the tool's text. The conversation lives in this process's memory (not durable:
 * a floor, not a design), serialised once per message, and each request sends the bytes kept so far
 * plus the new message, as ours does, so the floor pays no per-call serialisation of old messages.
 * No store, no transcript, no decision, no live events.
 */
'use strict';
const Anthropic = require('@anthropic-ai/sdk').default;
const { Context } = require('@temporalio/activity');
const { growText, growPrompt, GROW_SYSTEM } = require('../fixtures/grower-agents.js');

const GROW_SPEC = {
  name: 'grow',
  description: 'Returns the text of one step (about 2 KB).',
  input_schema: { type: 'object', properties: { step: { type: 'integer', minimum: 0 } }, required: ['step'] },
};

/** One conversation: `m0,m1,...` serialised in a buffer that grows by doubling. */
class Conversation {
  constructor() {
    this.buf = Buffer.allocUnsafe(64 * 1024);
    this.length = 0;
  }

  add(message) {
    const bytes = Buffer.from(`${this.length ? ',' : ''}${JSON.stringify(message)}`, 'utf8');
    if (this.length + bytes.length > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.length + bytes.length));
      this.buf.copy(grown, 0, 0, this.length);
      this.buf = grown;
    }
    bytes.copy(this.buf, this.length);
    this.length += bytes.length;
  }
}

function floorModelActivities({ baseURL, apiKey, model, maxTokens }) {
  const client = new Anthropic({ apiKey, baseURL, maxRetries: 0 });
  const conversations = new Map();
  const head = Buffer.from(`${JSON.stringify({ model, max_tokens: maxTokens, system: GROW_SYSTEM, tools: [GROW_SPEC], stream: true }).slice(0, -1)},"messages":[`);
  const end = Buffer.from(']}');
  const conversationOf = (calls) => {
    const id = Context.current().info.workflowExecution.workflowId;
    let c = conversations.get(id);
    if (!c) {
      c = new Conversation();
      c.add({ role: 'user', content: growPrompt(calls) });
      conversations.set(id, c);
    }
    return c;
  };
  return {
    /** One model call: `{ step }` of the tool call it asks for, or `{ done: true }`. */
    async floorModel({ calls }) {
      const c = conversationOf(calls);
      const chunks = [head, c.buf.subarray(0, c.length), end];
      const length = chunks.reduce((n, x) => n + x.length, 0);
      const body = new ReadableStream({
        start(controller) {
          for (const x of chunks) controller.enqueue(x);
          controller.close();
        },
      });
      const events = await client.messages.create(
        { model, max_tokens: maxTokens, messages: [], stream: true },
        { body, headers: { 'content-type': 'application/json', 'content-length': String(length) } },
      );
      const content = [];
      let json = '';
      let stop = null;
      for await (const e of events) {
        if (e.type === 'content_block_start') content.push({ ...e.content_block });
        else if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') content[content.length - 1].text += e.delta.text;
        else if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') json += e.delta.partial_json;
        else if (e.type === 'content_block_stop' && content[content.length - 1].type === 'tool_use') {
          content[content.length - 1].input = json ? JSON.parse(json) : {};
          json = '';
        } else if (e.type === 'message_delta') stop = e.delta.stop_reason;
      }
      c.add({ role: 'assistant', content });
      const call = content.find((b) => b.type === 'tool_use');
      if (stop !== 'tool_use' || !call) {
        conversations.delete(Context.current().info.workflowExecution.workflowId);
        return { done: true };
      }
      return { step: call.input.step, toolUseId: call.id };
    },
    /** The tool call: its text joins the conversation (the next model call sends it). */
    async floorGrow({ calls, step, toolUseId }) {
      conversationOf(calls).add({ role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: growText(step) }] });
    },
  };
}

module.exports = { floorModelActivities };
