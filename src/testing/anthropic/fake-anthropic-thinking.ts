/**
 * Extended thinking as the fake Anthropic server checks it: the `thinking` parameter and what it rules
 * out, and the signed thinking blocks a conversation sends back.
 *
 * Shapes from the SDK's types (@anthropic-ai/sdk 1.12), behaviour from the docs page build-with-
 * claude/extended-thinking, error wording from real 400s quoted in public issues (cited per message);
 * "guessed" or "wording is ours" where we had neither.
 */
import { blocksOf, isObj } from './fake-anthropic-blocks';
import { verifyRedactedThinking, verifyThinking } from './fake-anthropic-signatures';

/** Where the documentation links in the API's thinking errors point (as quoted in the issues below). */
const THINKING_DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

/** Whether a request turns thinking on (`enabled` or `adaptive`; ThinkingConfigParam). */
export function thinkingOn(body: Record<string, any>): boolean {
  return isObj(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive');
}

/**
 * The `thinking` parameter and the parameters it is incompatible with. Messages:
 * - "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
 *   (danny-avila/LibreChat#8346, tingly-dev/tingly-box#569); SDK doc: "Must be ≥1024 and less than max_tokens".
 * - "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at
 *   …#max-tokens-and-context-window-size" (liuw1535/antigravity2api-nodejs#149).
 * - "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at
 *   …#important-considerations-when-using-extended-thinking" (MartialBE/one-hub#529).
 * - "`top_k` must be unset when thinking is enabled. …" (quarkiverse/quarkus-langchain4j#1812).
 * - top_p: the docs allow 0.95–1 with thinking; the wording of that rejection is ours.
 */
export function checkThinkingConfig(body: Record<string, any>, generation: boolean): string | undefined {
  const t = body.thinking;
  if (t === undefined || t === null) return undefined;
  if (!isObj(t)) return 'thinking: Input should be a valid dictionary';
  const tags = ['enabled', 'disabled', 'adaptive', 'between_tools'];
  if (!tags.includes(t.type)) {
    return `thinking: Input tag '${String(t.type)}' found using 'type' does not match any of the expected tags: ${tags.map((x) => `'${x}'`).join(', ')}`;
  }
  if (t.type === 'enabled') {
    if (t.budget_tokens === undefined) return 'thinking.enabled.budget_tokens: Field required';
    if (typeof t.budget_tokens !== 'number' || !Number.isInteger(t.budget_tokens)) return 'thinking.enabled.budget_tokens: Input should be a valid integer';
    if (t.budget_tokens < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (generation && typeof body.max_tokens === 'number' && body.max_tokens <= t.budget_tokens) {
      return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${THINKING_DOCS}#max-tokens-and-context-window-size`;
    }
  }
  if (t.display !== undefined && t.display !== null && !['summarized', 'omitted'].includes(t.display)) {
    return `thinking.${t.type}.display: Input should be 'summarized' or 'omitted'`;
  }
  if (thinkingOn(body)) {
    const consult = `Please consult our documentation at ${THINKING_DOCS}#important-considerations-when-using-extended-thinking`;
    if (body.temperature !== undefined && body.temperature !== 1) return `\`temperature\` may only be set to 1 when thinking is enabled. ${consult}`;
    if (body.top_k !== undefined) return `\`top_k\` must be unset when thinking is enabled. ${consult}`;
    if (body.top_p !== undefined && (typeof body.top_p !== 'number' || body.top_p < 0.95)) {
      return `\`top_p\` must be greater than or equal to 0.95 when thinking is enabled. ${consult}`; // wording is ours
    }
  }
  return undefined;
}

/**
 * Thinking blocks in the conversation. Messages (all verbatim from real 400s):
 * - "messages.1.content.0: Invalid `signature` in `thinking` block" (anthropics/claude-code#10627); the
 *   SDK's ThinkingBlockParam: "a modified block results in a 400 invalid_request_error". We check every
 *   thinking block, in any turn (that the API checks earlier turns too is consistent with the reports,
 *   which are mostly at messages.1).
 * - "messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When
 *   `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the
 *   lastmost set of `tool_use` and `tool_result` blocks). …" (anomalyco/opencode#3077, n8n-io/n8n#22550):
 *   with thinking on, the assistant turn whose tool calls the last user turn answers must start with
 *   thinking (the docs: thinking blocks must be passed back during a tool-use loop).
 * - "messages.51.content.0: If an assistant message contains any thinking blocks, the first block must be
 *   thinking or redacted_thinking. Found text." (anthropics/claude-code#20705).
 * - "messages.1: The final block in an assistant message cannot be `thinking`." (tailcallhq/forgecode#2107).
 * - "messages.11.content.0: When thinking is disabled, an `assistant` message in the final position cannot
 *   contain `thinking`. To use thinking blocks, enable `thinking` in your request."
 *   (tailcallhq/forgecode#1195, #1853). Earlier assistant turns may keep thinking blocks with thinking off.
 * Redacted data that the fake did not issue is rejected with wording of ours.
 */
export function checkThinkingBlocks(body: Record<string, any>, turns: Array<{ role: string; content: any[]; index: number }>): string | undefined {
  const msgs = body.messages as any[];
  for (let i = 0; i < msgs.length; i++) {
    if (msgs[i].role !== 'assistant' || !Array.isArray(msgs[i].content)) continue;
    const c = msgs[i].content as any[];
    for (let j = 0; j < c.length; j++) {
      const b = c[j];
      if (b.type === 'thinking' && !verifyThinking(b.thinking, b.signature)) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      if (b.type === 'redacted_thinking' && !verifyRedactedThinking(b.data)) return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`; // wording is ours
    }
    const isThinking = (b: any) => b?.type === 'thinking' || b?.type === 'redacted_thinking';
    if (c.some(isThinking) && !isThinking(c[0])) {
      return `messages.${i}.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found ${c[0]?.type}.`;
    }
    if (c.length > 0 && c[c.length - 1].type === 'thinking' && i < msgs.length - 1) return `messages.${i}: The final block in an assistant message cannot be \`thinking\`.`;
  }
  const last = msgs[msgs.length - 1];
  if (!thinkingOn(body)) {
    if (last.role === 'assistant') {
      const j = blocksOf(last).findIndex((b) => b?.type === 'thinking' || b?.type === 'redacted_thinking');
      if (j >= 0) {
        return `messages.${msgs.length - 1}.content.${j}: When thinking is disabled, an \`assistant\` message in the final position cannot contain \`thinking\`. To use thinking blocks, enable \`thinking\` in your request.`;
      }
    }
    return undefined;
  }
  // Thinking on: the tool-use loop in progress (last user turn answers the previous assistant's calls).
  const lastTurn = turns[turns.length - 1]!;
  if (lastTurn.role === 'user' && lastTurn.content[0]?.type === 'tool_result' && turns.length >= 2) {
    const a = turns[turns.length - 2]!;
    const first = a.content[0];
    if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
      return `messages.${a.index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at ${THINKING_DOCS}`;
    }
  }
  return undefined;
}
