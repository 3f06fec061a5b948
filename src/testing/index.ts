/**
 * @fabric-harness/sdk/testing — scripted, protocol-faithful fakes of the model APIs, one folder per
 * protocol (Anthropic's Messages API, Claude on Bedrock and on Vertex, OpenAI's Responses and Chat
 * Completions APIs, Google's Gemini API; they are not models: they play the responses you script), and a
 * real Temporal dev server to run them against.
 * (The repository's own cluster provisioning — the Temporal server on PostgreSQL, MinIO — lives in
 * test/support/provision/ since 0.5.0: it is this project's test harness, not a public API.)
 */
export * from './anthropic/fake-anthropic';
export { FakeOpenAIResponsesServer } from './openai-responses/fake-openai-responses';
export { FakeOpenAIChatServer } from './openai-chat/fake-openai-chat';
export { FakeOpenAIServerBase, type FakeOpenAIOptions, type FakeReply as FakeOpenAIReply, type SseOut as FakeOpenAISseEvent } from './openai-common/fake-openai-server';
export * from './bedrock';
export * from './vertex';
export * from './temporal-cli';
export * from './prose';
export * from './reachable-types';
export * from './gemini/fake-gemini';
