/**
 * What an audit bundle's export, verification and reading throw. `fh audit verify` exits with a status
 * per code (docs/audit.md#exit-codes): a tampered or incomplete bundle, a bad signature, a divergence.
 */
import { FabricError } from '../../core/errors';

/** Not a bundle: not a tar, no manifest, a manifest of another shape, an unsafe entry name. */
export class BundleFormatError extends FabricError {
  constructor(message: string) {
    super('BUNDLE_INVALID', `not a valid audit bundle: ${message}`);
  }
}

/** A part, an event or the manifest does not match what the manifest (or its chain) records. `part` names it. */
export class BundleTamperedError extends FabricError {
  constructor(
    readonly part: string,
    readonly detail: string,
    /** The first event whose chain link does not match, when a history is what changed. */
    readonly eventId?: number,
  ) {
    super('BUNDLE_TAMPERED', `${part}${eventId !== undefined ? ` event ${eventId}` : ''} does not match the manifest: ${detail}`);
  }
}

/** A store blob a history (or another blob) refers to is not in the bundle, nor listed as missing at export. */
export class BundleIncompleteError extends FabricError {
  constructor(
    readonly key: string,
    readonly referencedBy: string,
  ) {
    super('BUNDLE_INCOMPLETE', `${referencedBy} refers to store blob ${key}, which the bundle does not hold`);
  }
}

/** The signature does not verify, is missing where a public key was given, or was made with another key. */
export class BundleSignatureError extends FabricError {
  constructor(message: string) {
    super('BUNDLE_SIGNATURE_INVALID', `signature: ${message}`);
  }
}

/** A history in the bundle does not replay against the given agent code. */
export class BundleReplayDivergedError extends FabricError {
  constructor(
    readonly part: string,
    readonly eventId: number | undefined,
    explanation: string,
  ) {
    super('BUNDLE_REPLAY_DIVERGED', `${part}${eventId !== undefined ? ` event ${eventId}` : ''} does not replay against the code: ${explanation}`);
  }
}

/** Export found a store blob a history refers to absent from the store (the bundle lists it as missing). */
export class BundleExportError extends FabricError {
  constructor(message: string) {
    super('BUNDLE_EXPORT_FAILED', message);
  }
}
