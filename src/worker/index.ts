export { createWorker, DEFAULT_TASK_QUEUE, type CreateWorkerOptions } from './create-worker';
export { FabricHarnessPlugin, type FabricHarnessPluginOptions } from './plugin';
export { bundleAgents, workflowsPathFor } from './bundle';
export { FileTranscriptStore, MemoryTranscriptStore, type TranscriptStore } from '../activities/transcript-store';
export { TranscriptStoreDriver, externalStorageFor } from '../activities/external-storage';
export { createActivities } from '../activities/activities';
export { implement, type ToolImplementation } from '../core/tools';
export { ToolRegistry, DuplicateToolImplementationError, type ToolSource } from '../core/tool-registry';
export { ModuleLoadError } from './load-modules';
