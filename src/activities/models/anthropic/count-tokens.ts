/**
 * Anthropic's count endpoint's body (POST /v1/messages/count_tokens): the request's params, minus max_tokens.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { messagesParams, type MessagesCall } from './messages';

/** The count_tokens body for the request `call` describes: the same params, minus max_tokens. */
export function countTokensParams(call: MessagesCall): Anthropic.MessageCountTokensParams {
  const { max_tokens: _maxTokens, ...rest } = messagesParams(call);
  return rest as Anthropic.MessageCountTokensParams;
}
