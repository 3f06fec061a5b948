/**
 * One fake per connection, each speaking its provider's protocol, for the per-connection scenario
 * (test/integration/connections-scenario.test.ts): the worker settings that point each connection at its
 * fake, the model to ask for, the fake's recorded conversation requests, and the provider's own
 * context-exceeded error (the words its API answers an over-long request with).
 */
import {
  fail,
  FakeAnthropicServer,
  FakeBedrockServer,
  FakeGeminiServer,
  FakeOpenAIChatServer,
  FakeOpenAIResponsesServer,
  FakeVertexServer,
  type FakeRoute,
  type FakeStep,
  type RecordedRequest,
} from '@fabric-harness/sdk/testing';
import type { CreateWorkerOptions } from '@fabric-harness/sdk/worker';

export const CONNECTION_NAMES = ['anthropic', 'openai', 'openai-chat', 'google', 'bedrock', 'vertex'] as const;
export type ConnectionName = (typeof CONNECTION_NAMES)[number];

/** What every fake shares: a script queue, a route, gates. */
interface ScriptedFake {
  url: string;
  enqueue(...steps: FakeStep[]): void;
  setRoute(route?: FakeRoute): void;
  release(gate?: string): void;
  stop(): Promise<void>;
}

export interface ConnectionFake {
  name: ConnectionName;
  model: string;
  fake: ScriptedFake;
  /** The worker's settings for this connection. */
  settings: NonNullable<CreateWorkerOptions['connections']>[string];
  /** The model calls the fake accepted (no token counts, model lookups or refused credentials). */
  calls(): RecordedRequest[];
  /** The provider's answer to a request over the model's context window. */
  overflow(): FakeStep;
}

const ANTHROPIC_OVERFLOW = () => fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' });

/** Starts one fake per connection (each with its own credentials) and says how to reach each. */
export async function startConnectionFakes(): Promise<ConnectionFake[]> {
  const anthropic = await FakeAnthropicServer.start({ apiKey: 'test-key' });
  const openai = await FakeOpenAIResponsesServer.start({ apiKey: 'oa-key' });
  const chat = await FakeOpenAIChatServer.start({ apiKey: 'chat-key' });
  const google = await FakeGeminiServer.start({ apiKey: 'g-key' });
  const bedrock = await FakeBedrockServer.start({ awsAccessKey: 'AKIDEXAMPLE', region: 'us-east-1' });
  const vertex = await FakeVertexServer.start({ accessToken: 'ya29.token', projectId: 'proj', region: 'us-east5' });
  return [
    {
      name: 'anthropic',
      model: 'claude-sonnet-5-5',
      fake: anthropic,
      settings: { provider: 'anthropic', baseURL: anthropic.url, apiKey: 'test-key' },
      calls: () => anthropic.messageRequests().filter((r) => r.path === '/v1/messages'),
      overflow: ANTHROPIC_OVERFLOW,
    },
    {
      name: 'openai',
      model: 'gpt-5.1',
      fake: openai,
      settings: { provider: 'openai', baseURL: openai.url, apiKey: 'oa-key' },
      calls: () => openai.acceptedRequests(),
      overflow: () => fail(400, { message: 'Your input exceeds the context window of this model. Please adjust your input and try again.' }),
    },
    {
      name: 'openai-chat',
      model: 'gpt-4.1',
      fake: chat,
      settings: { provider: 'openai-chat', baseURL: chat.url, apiKey: 'chat-key' },
      calls: () => chat.acceptedRequests(),
      overflow: () => fail(400, { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 250000 tokens. Please reduce the length of the messages." }),
    },
    {
      name: 'google',
      model: 'gemini-2.5-flash',
      fake: google,
      settings: { provider: 'google', baseURL: google.url, apiKey: 'g-key' },
      calls: () => google.generateRequests(),
      overflow: () => fail(400, { message: 'The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).' }),
    },
    {
      name: 'bedrock',
      model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      fake: bedrock,
      settings: { provider: 'bedrock', baseURL: bedrock.url, region: 'us-east-1', awsAccessKey: 'AKIDEXAMPLE', awsSecretKey: 'bedrock-secret' },
      calls: () => bedrock.messageRequests(),
      overflow: ANTHROPIC_OVERFLOW,
    },
    {
      name: 'vertex',
      model: 'claude-sonnet-4-5@20250929',
      fake: vertex,
      settings: { provider: 'vertex', baseURL: vertex.url, region: 'us-east5', projectId: 'proj', accessToken: 'ya29.token' },
      calls: () => vertex.messageRequests(),
      overflow: ANTHROPIC_OVERFLOW,
    },
  ];
}

/** The worker's `connections` for these fakes (every one but the default `anthropic`, which is model.baseURL). */
export function connectionsOf(fakes: ConnectionFake[]): NonNullable<CreateWorkerOptions['connections']> {
  return Object.fromEntries(fakes.map((f) => [f.name, f.settings]));
}
