import { FabricError } from '../../core/errors';

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

/**
 * The store could not answer (a network error, a timeout, a refused connection, a permission error):
 * nothing is known of the blob, so the task that needs it is retried until the store is back. Only a
 * store's "not found" (file: ENOENT; S3: NoSuchKey / 404) proves a blob absent ({@link StoreBlobMissingError}).
 */
export class StoreUnreachableError extends FabricError {
  constructor(
    readonly key: string,
    readonly location: string,
    reason: string,
  ) {
    super('STORE_UNREACHABLE', `store ${location} did not answer for ${key} (${reason}); retrying until it does`);
  }
}

/**
 * A blob a history refers to is gone from the store (the store answered "not found"). An activity that
 * needed it fails for good; a run whose workflow task needs it is terminated by the worker's missing-blob
 * reaper with a reason that starts with this code (docs/deploying.md, "When a blob is missing").
 */
export class StoreBlobMissingError extends FabricError {
  constructor(
    readonly key: string,
    readonly location: string,
    readonly origin: string,
  ) {
    super(
      'STORE_BLOB_MISSING',
      `STORE_BLOB_MISSING: offloaded payload ${key} (${origin}) is missing from the store ${location}. ` +
        'An activity that needed it as input has failed for good (the run, or the session turn, ends with this error); ' +
        'a run whose workflow task needs it cannot go on, and the worker terminates it with this error. ' +
        'A worker pointed at the wrong store is the usual cause: every worker and client must use the same one ' +
        "(FH_STORE_DIR / store), and the store must outlive every history that refers to it (the namespace retention). " +
        'See docs/deploying.md, "When a blob is missing".',
    );
  }
}
