import { isContextOverflowMessage } from '../../src/core/context/compaction/overflow';

describe('isContextOverflowMessage', () => {
  it.each([
    'prompt is too long: 210000 tokens > 200000 maximum',
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
    'Error code: 400 - context_length_exceeded',
    'The request exceeds the context window of this model',
    'Too many tokens in request',
    'Input is too long for requested model.',
    'input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000',
    'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
    'Request too large for gpt-4 in organization org-x on tokens per min',
    'This exceeds the context size',
    'PROMPT IS TOO LONG',
  ])('matches %s', (m) => {
    expect(isContextOverflowMessage(m)).toBe(true);
  });

  it.each([
    'max_tokens: field required',
    'messages.0.content.1.image.source.base64: image exceeds 5 MB maximum',
    'Could not process image',
    'Request too large (payload exceeds 32MB)',
    'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-x',
    'invalid x-api-key',
    'messages: roles must alternate between "user" and "assistant"',
  ])('does not match %s', (m) => {
    expect(isContextOverflowMessage(m)).toBe(false);
  });
});
