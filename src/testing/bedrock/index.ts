export { FakeBedrockServer, FAKE_BEDROCK_ANTHROPIC_VERSION, type FakeBedrockOptions } from './fake-bedrock';
