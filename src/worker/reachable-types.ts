/**
 * Types that a public signature of this entry reaches (a method's result, an option's field, ...),
 * exported so that code compiled with `declaration: true` can name them (TS2883 otherwise).
 * test/unit/public-types.test.ts walks the built .d.ts and fails on any such type left unexported.
 */
export type { ActivityDeps } from '../activities/create-activities';
export type { ModelConnection } from '../activities/models/anthropic/messages';
export type {
  ModelConnectionSettings,
  AnthropicModelConnection,
  OpenAIModelConnection,
  OpenAIChatModelConnection,
  OpenAICompatibleModelConnection,
  GoogleModelConnection,
  BedrockModelConnection,
  VertexModelConnection,
} from '../activities/models/connections';
export type { LiveBrokerSettings, LiveBrokerEntry } from '../wire/live-broker';
export type { RedisLivePublisher } from '../activities/stream/redis-broker';
export type { RedisConnection } from '../activities/stream/redis-client';
export type { ToolSandboxOptions } from '../activities/tools/tool-env';
export type { CompactionStrategySetting } from '../core/context/strategy';
export type { FabricActivities, FlushMemoryActivityInput, FlushMemoryActivityResult, MemoryFilePayload, ModelActivityCompactFirst, ModelActivityInput, ModelActivityReply, ModelActivityResult, ResolveModelActivityInput, ResolveModelResult, SummarizeActivityInput, ToolActivityInput, ToolActivityResult } from '../wire/activity-contract';
export type { McpCallResult, McpConnections, McpConnectionsOptions } from '../activities/mcp/connections';
export type { ToolSandbox } from '../activities/tools/tool-env';
export type { WorktreePayload } from '../wire/activity-contract';
export type { ReplyArchiveChunk, StoredReply } from '../core/sessions/reply-archive';
export type { StreamSlot } from '../wire/stream';
export type { Confinement } from '../activities/tools/sandbox/sandbox';
export type { StorePreludeInput } from '../wire/activity-contract';
export type { McpPinInput, McpPinResult } from '../wire/mcp-pin';
