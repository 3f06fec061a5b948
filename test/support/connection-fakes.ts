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

export const CONNECTION_NAMES = ['anthropic', 'openai', 'openai-chat', 'openai-compatible', 'google', 'bedrock', 'vertex'] as const;
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
  /** The tool results a request sends back, read in its protocol's own shape. */
  toolResults(req: RecordedRequest): SentToolResult[];
}

/** A tool result as a request carries it: the call it answers (by id, or by name where that is the key). */
export interface SentToolResult {
  id?: string;
  name?: string;
  output: string;
  isError: boolean;
}

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- request bodies as the fakes recorded them
const textOf = (content: Json): string => (typeof content === 'string' ? content : (content as Json[]).map((b) => b.text ?? '').join(''));

/** Messages API (Anthropic, Bedrock, Vertex): tool_result blocks in the last user message. */
const anthropicResults = (req: RecordedRequest): SentToolResult[] =>
  (req.body.messages.at(-1).content as Json[]).filter((b) => b.type === 'tool_result').map((b) => ({ id: b.tool_use_id, output: textOf(b.content), isError: b.is_error === true }));
/** Responses API: function_call_output items (an error is only words in the output). */
const responsesResults = (req: RecordedRequest): SentToolResult[] =>
  (req.body.input as Json[]).filter((i) => i.type === 'function_call_output').map((i) => ({ id: i.call_id, output: textOf(i.output), isError: false }));
/** Chat Completions: `tool` messages. */
const chatResults = (req: RecordedRequest): SentToolResult[] =>
  (req.body.messages as Json[]).filter((m) => m.role === 'tool').map((m) => ({ id: m.tool_call_id, output: textOf(m.content), isError: false }));
/** Gemini: functionResponse parts of the last user content, keyed by the function's name. */
const geminiResults = (req: RecordedRequest): SentToolResult[] =>
  (req.body.contents.at(-1).parts as Json[])
    .filter((p) => p.functionResponse)
    .map(({ functionResponse: f }) => ({ name: f.name, output: String(f.response.output ?? f.response.error), isError: 'error' in f.response }));

const ANTHROPIC_OVERFLOW = () => fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' });

/** Starts one fake per connection (each with its own credentials) and says how to reach each. */
export async function startConnectionFakes(): Promise<ConnectionFake[]> {
  const anthropic = await FakeAnthropicServer.start({ apiKey: 'test-key' });
  const openai = await FakeOpenAIResponsesServer.start({ apiKey: 'oa-key' });
  const chat = await FakeOpenAIChatServer.start({ apiKey: 'chat-key' });
  const compatible = await FakeOpenAIChatServer.start({ keyless: true }); // a local server (vLLM, Ollama) asks for no key
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
      toolResults: anthropicResults,
    },
    {
      name: 'openai',
      model: 'gpt-5.1',
      fake: openai,
      settings: { provider: 'openai', baseURL: openai.url, apiKey: 'oa-key' },
      calls: () => openai.acceptedRequests(),
      overflow: () => fail(400, { message: 'Your input exceeds the context window of this model. Please adjust your input and try again.' }),
      toolResults: responsesResults,
    },
    {
      name: 'openai-chat',
      model: 'gpt-4.1',
      fake: chat,
      settings: { provider: 'openai-chat', baseURL: chat.url, apiKey: 'chat-key' },
      calls: () => chat.acceptedRequests(),
      overflow: () => fail(400, { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 250000 tokens. Please reduce the length of the messages." }),
      toolResults: chatResults,
    },
    {
      // Any OpenAI-compatible server, here Kimi's words for an overflow (no code: recognised by its phrase).
      name: 'openai-compatible',
      model: 'kimi-k2',
      fake: compatible,
      settings: { provider: 'openai-compatible', baseURL: compatible.url },
      calls: () => compatible.acceptedRequests(),
      overflow: () => fail(400, { message: 'Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)' }),
      toolResults: chatResults,
    },
    {
      name: 'google',
      model: 'gemini-2.5-flash',
      fake: google,
      settings: { provider: 'google', baseURL: google.url, apiKey: 'g-key' },
      calls: () => google.generateRequests(),
      overflow: () => fail(400, { message: 'The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).' }),
      toolResults: geminiResults,
    },
    {
      name: 'bedrock',
      model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      fake: bedrock,
      settings: { provider: 'bedrock', baseURL: bedrock.url, region: 'us-east-1', awsAccessKey: 'AKIDEXAMPLE', awsSecretKey: 'bedrock-secret' },
      calls: () => bedrock.messageRequests(),
      overflow: ANTHROPIC_OVERFLOW,
      toolResults: anthropicResults,
    },
    {
      name: 'vertex',
      model: 'claude-sonnet-4-5@20250929',
      fake: vertex,
      settings: { provider: 'vertex', baseURL: vertex.url, region: 'us-east5', projectId: 'proj', accessToken: 'ya29.token' },
      calls: () => vertex.messageRequests(),
      overflow: ANTHROPIC_OVERFLOW,
      toolResults: anthropicResults,
    },
  ];
}

/** The worker's `connections` for these fakes (every one but the default `anthropic`, which is model.baseURL). */
export function connectionsOf(fakes: ConnectionFake[]): NonNullable<CreateWorkerOptions['connections']> {
  return Object.fromEntries(fakes.map((f) => [f.name, f.settings]));
}
