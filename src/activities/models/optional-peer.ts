/**
 * Provider SDKs are optional peers: an app installs the ones its connections use. Each is loaded
 * here, when its connection is first used, so a worker that never calls Gemini never loads (or
 * needs) its SDK, and one that does but lacks it is told which package to install.
 */
import { ProviderPackageMissingError } from '../../core/errors';

/** `require(packageName)`, or PROVIDER_PACKAGE_MISSING naming the package when it is not installed. */
export function requireProviderPackage<T>(packageName: string, provider: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(packageName) as T;
  } catch (err) {
    // Only the package itself missing: a dependency of it missing is its install's fault, said as it is.
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes(`'${packageName}'`)) {
      throw new ProviderPackageMissingError(packageName, provider);
    }
    throw err;
  }
}
