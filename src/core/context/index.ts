/** Context hygiene beyond summaries: the keep window, capping, masking and offloading tool results. Pure (workflow-safe). */
export { keepCount, entriesWithinTokens, minimalWindowStart, type KeepWindow } from './keep-window';
export { capToolResult, truncationMarker, type CapOptions, type CappedToolResult } from './cap';
export {
  artifactSettingsSchema,
  resolveOffloadBytes,
  shouldOffload,
  artifactReference,
  artifactPage,
  toolsByNameWithAliases,
  isReadArtifact,
  READ_ARTIFACT,
  READ_ARTIFACT_ALIAS,
  DEFAULT_OFFLOAD_BYTES,
  MIN_OFFLOAD_BYTES,
  PREVIEW_BYTES,
  type ArtifactSettings,
  type ArtifactSource,
} from './artifacts';
export { maskStaleToolResults, toolPlaceholder, isPlaceholder, type MaskOptions, type MaskResult } from './mask';
export { planMask, MASK_MIN_RESULTS, MASK_MIN_TOKENS, type MaskPlan } from './mask-plan';
export { isVerificationEvidence, preservePredicate, commandOf, firstStringArg, type PreservePredicate } from './evidence';
export { toolResultSettingsSchema, preserveSettingsSchema, MIN_CAP_TOKENS, type ToolResultSettings, type PreserveSettings } from './tool-result-settings';
export { InvalidToolResultOptionsError } from './errors';
