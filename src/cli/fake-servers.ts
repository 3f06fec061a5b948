/**
 * The fake model servers `fh fake` and `fh demo` can run, one per protocol, behind one small shape:
 * where it listens, the variables that point an agent at it, and its script. Each fake module is
 * loaded only when chosen (they are the testing entry's, not the CLI's start-up cost).
 */
import type { FakeRoute, FakeStep } from '../testing/anthropic/fake-anthropic-script';

export const FAKE_PROVIDERS = ['anthropic', 'openai', 'openai-chat', 'google'] as const;
export type FakeProvider = (typeof FAKE_PROVIDERS)[number];

export interface RunningFake {
  /** What it fakes, for people: "Anthropic", "OpenAI Responses", "OpenAI Chat Completions". */
  name: string;
  url: string;
  /** `NAME=value …` that point the provider's SDK (and our built-in connection) at it. */
  env: string;
  enqueue(...steps: FakeStep[]): void;
  replaceScript(steps: FakeStep[]): void;
  remaining(): number;
  answered(): number;
  stop(): Promise<void>;
}

/* eslint-disable @typescript-eslint/no-require-imports */
export async function startFake(provider: FakeProvider, opts: { port?: number; script: FakeStep[]; route?: FakeRoute }): Promise<RunningFake> {
  if (provider === 'anthropic') {
    const { FakeAnthropicServer } = require('../testing/anthropic/fake-anthropic') as typeof import('../testing/anthropic/fake-anthropic');
    const fake = await FakeAnthropicServer.start(opts);
    return wrap(fake, 'Anthropic', `ANTHROPIC_BASE_URL=${fake.url} ANTHROPIC_API_KEY=fake`, () => fake.messageRequests().length);
  }
  if (provider === 'openai') {
    const { FakeOpenAIResponsesServer } = require('../testing/openai-responses/fake-openai-responses') as typeof import('../testing/openai-responses/fake-openai-responses');
    const fake = await FakeOpenAIResponsesServer.start(opts);
    return wrap(fake, 'OpenAI Responses API', `OPENAI_BASE_URL=${fake.url} OPENAI_API_KEY=fake`, () => fake.acceptedRequests().length);
  }
  if (provider === 'google') {
    const { FakeGeminiServer } = require('../testing/gemini/fake-gemini') as typeof import('../testing/gemini/fake-gemini');
    const fake = await FakeGeminiServer.start(opts);
    return wrap(fake, 'Gemini', `GOOGLE_GEMINI_BASE_URL=${fake.url} GEMINI_API_KEY=fake`, () => fake.generateRequests().length);
  }
  const { FakeOpenAIChatServer } = require('../testing/openai-chat/fake-openai-chat') as typeof import('../testing/openai-chat/fake-openai-chat');
  const fake = await FakeOpenAIChatServer.start(opts);
  return wrap(fake, 'OpenAI Chat Completions API', `OPENAI_BASE_URL=${fake.url} OPENAI_API_KEY=fake`, () => fake.acceptedRequests().length);
}
/* eslint-enable @typescript-eslint/no-require-imports */

function wrap(
  fake: { url: string; enqueue(...s: FakeStep[]): void; replaceScript(s: FakeStep[]): void; remaining(): number; stop(): Promise<void> },
  name: string,
  env: string,
  answered: () => number,
): RunningFake {
  return {
    name,
    url: fake.url,
    env,
    enqueue: (...steps) => fake.enqueue(...steps),
    replaceScript: (steps) => fake.replaceScript(steps),
    remaining: () => fake.remaining(),
    answered,
    stop: () => fake.stop(),
  };
}
