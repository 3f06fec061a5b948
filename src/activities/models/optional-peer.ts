/**
 * Provider SDKs are optional peers: an app installs the ones its connections use. Each is loaded
 * here, when its connection is first used, so a worker that never calls Gemini never loads (or
 * needs) its SDK, and one that does but lacks it is told which package to install.
 */
import { loadProviderPackage } from './optional-package';

/** `require(packageName)`, or PROVIDER_PACKAGE_MISSING naming the package when it is not installed. */
export function requireProviderPackage<T>(packageName: string, provider: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return loadProviderPackage<T>(packageName, provider, () => require(packageName));
}
