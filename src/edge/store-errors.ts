import { FabricError } from '../core/errors';

/** A blob whose content does not hash to its key: corrupt or tampered with; never given to a model. */
export class StoreIntegrityError extends FabricError {
  constructor(
    readonly key: string,
    detail: string,
  ) {
    super('STORE_INTEGRITY', `store blob ${key} failed its content-hash check (${detail}): it is corrupt or was modified; restore it from a backup of the store or delete it`);
  }
}

/** The store directory is not private to this user: refused rather than used. */
export class StoreUnsafeError extends FabricError {
  constructor(
    readonly dir: string,
    reason: string,
  ) {
    super('STORE_UNSAFE', `store directory ${dir} ${reason}; the store holds transcripts and tool output, so it must be owned by this user (uid ${process.getuid?.() ?? '?'}) and not writable by group or others`);
  }
}

/** A blob a history refers to is gone from the store: the run cannot replay until it is restored. */
export class StoreBlobMissingError extends FabricError {
  constructor(
    readonly key: string,
    readonly location: string,
    readonly origin: string,
  ) {
    super(
      'STORE_BLOB_MISSING',
      `STORE_BLOB_MISSING: offloaded payload ${key} (${origin}) is missing from the store ${location}. ` +
        'The run whose history holds this claim cannot continue until the blob is restored (from a backup of the store directory, ' +
        "or by pointing the worker's FH_STORE_DIR / store at the right one); if it is lost for good, terminate the run. " +
        'The store must outlive every history that refers to it (the namespace retention).',
    );
  }
}
