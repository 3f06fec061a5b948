import { isContextOverflowCode, isContextOverflowMessage } from '../../src/core/context/compaction/overflow';

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

  // Each provider's own wording, as its users reported it (sources in the comments of overflow.ts).
  it.each([
    ['OpenAI Chat Completions', "This model's maximum context length is 128000 tokens. However, your messages resulted in 204308 tokens. Please reduce the length of the messages."],
    ['OpenAI Responses', 'Input tokens exceed the configured limit of 272000 tokens.'],
    ['OpenAI code in the message', '400 context_length_exceeded'],
    ['Gemini', 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).'],
    ['Gemini, without the count', 'Request payload exceeds the maximum number of tokens allowed (1048576).'],
    ['Kimi / Moonshot', 'Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)'],
    ['Moonshot v1', 'model max length exceeded, max length:8192'],
    ['OpenRouter', 'This endpoint\'s maximum context length is 131072 tokens. However, you requested about 141607 tokens (10535 of text input, 131072 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.'],
    ['vLLM', "This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion."],
    ['Ollama', 'the input length exceeds the context length'],
  ])('recognises %s', (_provider, message) => {
    expect(isContextOverflowMessage(message)).toBe(true);
  });

  it('recognises the code context_length_exceeded, and no other', () => {
    expect(isContextOverflowCode('context_length_exceeded')).toBe(true);
    for (const code of ['rate_limit_exceeded', 'invalid_api_key', undefined, 400]) expect(isContextOverflowCode(code)).toBe(false);
  });

  it.each([
    'max_tokens must be less than or equal to 16384, the maximum value for max_tokens is less than the context_window for this model'.replace('context_window', 'window'),
    'Rate limit reached for requests',
    'Your request exceeded the rate limit',
  ])('leaves %s alone', (m) => {
    expect(isContextOverflowMessage(m)).toBe(false);
  });
});
