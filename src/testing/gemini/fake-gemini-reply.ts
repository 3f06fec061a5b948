/**
 * A scripted step (the Anthropic fake's language: say, callTools, reply, think) as Gemini answers it:
 * the parts of one candidate, then the chunks `:streamGenerateContent?alt=sse` sends them in (text
 * and thoughts in pieces, each function call whole in one chunk, usage on every chunk, the finish
 * reason and the output counts on the last), written as `data: {…}` events.
 */
import type * as http from 'node:http';
import { isThinkingItem, type FakeStep, type FakeStopReason, type FakeToolCall, type FakeUsage } from '../anthropic/fake-anthropic-script';
import { countFakeTextTokens } from '../anthropic/fake-anthropic-validate';
import type { FakeStreamOptions, StreamGates } from '../anthropic/fake-anthropic-sse';
import { signFunctionCall } from './fake-gemini-validate';

/** A part of a reply, in Gemini's wire names. */
export interface FakeGeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name: string; args: unknown };
}

/** One GenerateContentResponse (a whole reply, or one chunk of a streamed one). */
export interface FakeGeminiResponse {
  candidates: Array<{ content: { parts: FakeGeminiPart[]; role: 'model' }; finishReason?: string; index: number }>;
  usageMetadata: Record<string, unknown>;
  modelVersion: string;
  responseId: string;
}

export interface BuiltReply {
  parts: FakeGeminiPart[];
  finishReason: string;
  /** Output tokens of the visible parts and of the thoughts (counted whether or not they are shown). */
  candidatesTokens: number;
  thoughtsTokens: number;
  usage?: FakeUsage;
}

const FINISH: Partial<Record<FakeStopReason, string>> = { max_tokens: 'MAX_TOKENS', refusal: 'SAFETY', model_context_window_exceeded: 'MAX_TOKENS' };

/**
 * The parts a step answers with. Thoughts are shown only when the request asked (includeThoughts);
 * a function call's first part carries its signature (Gemini 3 signs every call), and a thinking
 * reply without calls signs its last text part.
 */
export function partsFor(step: Exclude<FakeStep, { kind: 'error' }>, includeThoughts: boolean, nextCallId: (() => string) | undefined): BuiltReply {
  const parts: FakeGeminiPart[] = [];
  let thoughts = 0;
  let thought = false;
  const think = (t: string) => {
    thought = true;
    thoughts += countFakeTextTokens(t);
    if (includeThoughts) parts.push({ text: t, thought: true });
  };
  let signedCall = false;
  const call = (c: FakeToolCall) => {
    const args = (c.input === undefined ? {} : c.input) as Record<string, unknown>;
    // Without ids (Gemini before 3 numbers no calls) a call is only its name and arguments.
    const id = c.id ?? nextCallId?.();
    const functionCall = { ...(id !== undefined ? { id } : {}), name: c.name, args };
    parts.push(signedCall ? { functionCall } : { functionCall, thoughtSignature: signFunctionCall(functionCall) });
    signedCall = true;
  };
  let stop: FakeStopReason | undefined;
  if (step.kind === 'text') {
    if (step.thinking !== undefined) think(step.thinking);
    parts.push({ text: step.text });
    stop = step.stopReason;
  } else if (step.kind === 'tool_use') {
    for (const t of step.thinking ?? []) think(t.kind === 'thinking' ? t.thinking : t.payload);
    if (step.text) parts.push({ text: step.text });
    step.calls.forEach(call);
  } else {
    for (const item of step.content) {
      if (typeof item === 'string') parts.push({ text: item });
      else if (isThinkingItem(item)) think(item.kind === 'thinking' ? item.thinking : item.payload);
      else call(item);
    }
    stop = step.stopReason;
  }
  const lastText = [...parts].reverse().find((p) => p.text !== undefined && !p.thought);
  if (thought && !signedCall && lastText) lastText.thoughtSignature = Buffer.from(`fake-gemini-text-sig:${lastText.text!.length}`).toString('base64');
  const candidatesTokens = parts.filter((p) => !p.thought).reduce((n, p) => n + countFakeTextTokens(p.text ?? JSON.stringify(p.functionCall ?? '')), 0);
  return { parts, finishReason: (stop && FINISH[stop]) ?? 'STOP', candidatesTokens, thoughtsTokens: thoughts, ...(step.usage ? { usage: step.usage } : {}) };
}

/**
 * The parts as stream chunks: text and thoughts in `chunkChars` pieces, calls whole. A signed text
 * part's signature comes after its pieces, on an empty text part of its own, as Gemini streams it.
 */
export function chunkParts(parts: FakeGeminiPart[], chunkChars: number): FakeGeminiPart[][] {
  const chunks: FakeGeminiPart[][] = [];
  for (const p of parts) {
    if (p.functionCall || !p.text) {
      chunks.push([p]);
      continue;
    }
    const chars = Array.from(p.text);
    for (let i = 0; i < chars.length; i += chunkChars) {
      const piece: FakeGeminiPart = { text: chars.slice(i, i + chunkChars).join('') };
      if (p.thought) piece.thought = true;
      chunks.push([piece]);
    }
    if (p.thoughtSignature) chunks.push([{ text: '', ...(p.thought ? { thought: true } : {}), thoughtSignature: p.thoughtSignature }]);
  }
  return chunks;
}

export interface StreamPlan {
  chunks: FakeGeminiResponse[];
  options: FakeStreamOptions;
}

/**
 * Writes the chunks as server-sent events, paced, paused at a gate, or cut by an error object after
 * `errorAfterDeltas` chunks (Gemini ends a failing stream with `data: {"error": …}`).
 */
export async function writeGeminiStream(res: http.ServerResponse, plan: StreamPlan, headers: Record<string, string>, gates: StreamGates): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  const { delayMs = 0, pauseAfterDeltas, gate = 'default', errorAfterDeltas } = plan.options;
  for (const [i, chunk] of plan.chunks.entries()) {
    if (errorAfterDeltas !== undefined && i === errorAfterDeltas) {
      res.write(`data: ${JSON.stringify({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } })}\r\n\r\n`);
      res.end();
      return;
    }
    if (pauseAfterDeltas !== undefined && i === pauseAfterDeltas) await gates.wait(gate);
    if (delayMs > 0 && i > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  }
  res.end();
}
