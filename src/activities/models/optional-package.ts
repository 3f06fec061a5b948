/**
 * A provider's SDK that is an optional peer (Anthropic's Bedrock and Vertex SDKs, …): loaded the first
 * time its connection makes a client, never before, so an app that does not use the connection needs
 * neither the package nor its types. A missing package is a typed error naming what to install.
 */
import { ProviderPackageMissingError } from '../../core/errors';

/** `load()` (a `require` of `packageName`), with the package's absence as ProviderPackageMissingError. */
export function loadProviderPackage<T>(packageName: string, provider: string, load: () => unknown): T {
  try {
    return load() as T;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e?.code === 'MODULE_NOT_FOUND' && String(e.message).includes(`'${packageName}'`)) throw new ProviderPackageMissingError(packageName, provider);
    throw err;
  }
}
