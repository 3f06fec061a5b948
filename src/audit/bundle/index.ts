/**
 * Audit bundles (docs/audit.md): one sealed file of a workflow's runs and the store blobs they refer to,
 * verified and read offline. `fh audit export|verify|show|search` are these functions.
 */
export { exportBundle, buildBundle, type ExportOptions, type ExportResult } from './export';
export { verifyBundle, type VerifyOptions, type VerifyReport } from './verify';
export { openBundle, readBundleFile, runHistory, BundleStore, type OpenBundle, type OpenBundleOptions } from './read';
export { auditBundle, type BundleRunAudit } from './show';
export { searchBundles, searchVisibility, type SearchQuery, type SearchHit } from './search';
export { signManifest, checkSignature, keyFingerprint, publicKeyFrom } from './sign';
export { readTar, writeTar, type TarEntry } from './tar';
export { eventChain, BUNDLE_FORMAT, BUNDLE_VERSION, type BundleManifest, type BundleRun, type BundleSignature } from './format';
export type { FetchedRun } from './runs';
export {
  BundleExportError,
  BundleFormatError,
  BundleIncompleteError,
  BundleReplayDivergedError,
  BundleSignatureError,
  BundleTamperedError,
} from './errors';
