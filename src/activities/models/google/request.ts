/**
 * Our request (../port: MessagesCall, the conversation as Anthropic-shaped entries) as Gemini's
 * GenerateContentRequest: system -> systemInstruction, tools -> functionDeclarations (their JSON
 * schema as `parametersJsonSchema`, which Gemini takes as it is), entries -> contents (user / model).
 *
 * Thought signatures round-trip (Gemini 3 refuses a function call of the current turn without its
 * signature; ./reply says where they are kept): a `thinking` block is a thought part with its
 * signature; a `redacted_thinking` block holds the signature of the part that follows it.
 */
import { toApiMessages, type ApiContentBlock } from '../../../core/entries';
import type { MessagesCall } from '../port';

/** One part of a Gemini content (the fields we send and read; Gemini's wire names). */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema: Record<string, unknown>;
}

/** The generation settings sent with a call (the SDK's GenerateContentConfig, as far as we set it). */
export interface GeminiConfig {
  systemInstruction?: { parts: GeminiPart[] };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  maxOutputTokens: number;
  thinkingConfig?: { thinkingBudget: number; includeThoughts: boolean };
}

/**
 * Tool-call ids we made up because Gemini sent none (models before Gemini 3 do not number their
 * calls): never sent back, since Gemini matches a response to its call by name then.
 */
export const SYNTHETIC_CALL_ID_PREFIX = 'gemini_call_';

export function geminiRequest(call: MessagesCall): { contents: GeminiContent[]; config: GeminiConfig } {
  return { contents: geminiContents(call), config: geminiConfig(call) };
}

export function geminiConfig(call: MessagesCall): GeminiConfig {
  return {
    ...(call.system ? { systemInstruction: { parts: [{ text: call.system }] } } : {}),
    ...(call.tools.length
      ? {
          tools: [
            {
              functionDeclarations: call.tools.map((t) => ({
                name: t.name,
                ...(t.description ? { description: t.description } : {}),
                parametersJsonSchema: t.input_schema,
              })),
            },
          ],
        }
      : {}),
    // Gemini counts thoughts against maxOutputTokens: the budget comes on top of the reply's own room,
    // as with Claude's max_tokens.
    maxOutputTokens: call.thinking ? call.thinking.budgetTokens + call.maxTokens : call.maxTokens,
    // Absent: no thinkingConfig, the model's own default (Gemini 2.5 and 3 think unasked, without
    // returning their thoughts; the signatures still come back and are kept).
    ...(call.thinking ? { thinkingConfig: { thinkingBudget: call.thinking.budgetTokens, includeThoughts: true } } : {}),
  };
}

export function geminiContents(call: Pick<MessagesCall, 'entries'>): GeminiContent[] {
  const messages = toApiMessages(call.entries);
  const names = new Map<string, string>();
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_use') names.set(b.id, b.name);
  const contents: GeminiContent[] = [];
  for (const m of messages) {
    const parts = partsOf(m.content, names);
    if (parts.length > 0) contents.push({ role: m.role === 'assistant' ? 'model' : 'user', parts });
  }
  return contents;
}

function partsOf(blocks: ApiContentBlock[], names: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let signature: string | undefined;
  const signed = (part: GeminiPart): GeminiPart => {
    const out = signature ? { ...part, thoughtSignature: signature } : part;
    signature = undefined;
    return out;
  };
  for (const b of blocks) {
    if (b.type === 'thinking') parts.push({ text: b.thinking, thought: true, ...(b.signature ? { thoughtSignature: b.signature } : {}) });
    else if (b.type === 'redacted_thinking') signature = b.data;
    else if (b.type === 'text') parts.push(signed({ text: b.text }));
    else if (b.type === 'tool_use') parts.push(signed({ functionCall: { ...callId(b.id), name: b.name, args: asArgs(b.input) } }));
    else if (b.type === 'tool_result') {
      const response = b.is_error ? { error: b.content } : { output: b.content };
      parts.push({ functionResponse: { ...callId(b.tool_use_id), name: names.get(b.tool_use_id) ?? b.tool_use_id, response } });
    }
    // compaction blocks are Claude's server-side summaries: nothing Gemini could read.
  }
  // A signature with no part after it (Gemini signs an empty last part of a streamed text): it goes
  // back on the part it followed, where Gemini reads it for a reply without function calls.
  if (signature) {
    const last = [...parts].reverse().find((p) => !p.thought && !p.thoughtSignature);
    if (last) last.thoughtSignature = signature;
  }
  return parts;
}

function callId(id: string): { id?: string } {
  return id.startsWith(SYNTHETIC_CALL_ID_PREFIX) ? {} : { id };
}

/** A call's arguments are a JSON object on Gemini's wire (a Struct); anything else is wrapped. */
function asArgs(input: unknown): Record<string, unknown> {
  return input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { value: input };
}
