import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { parseWith } from '../../core/validate';
import { FabricError } from '../../core/errors';
import type { StoredBlob, TranscriptStore } from './transcript-store';

/**
 * The transcript store on S3 (or any S3-compatible server: MinIO, R2, …), for workers on several
 * machines: transcript segments, tool results and offloaded payloads under the same keys as the file
 * store, below an optional prefix. Without `client`/`credentials`/`region`/`endpoint` the AWS SDK's
 * standard environment applies (AWS_REGION, AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_ENDPOINT_URL_S3, an
 * instance role, …).
 *
 * Content is not verified here: every reader checks it against its key (transcript segments by chain
 * hash, tool results and payloads by sha256), so a tampered object fails with STORE_INTEGRITY there.
 *
 * Permissions: s3:GetObject, s3:PutObject, and s3:ListBucket (without it S3 answers a missing key with
 * 403 instead of 404, which this store cannot tell from a real refusal and reports as an error);
 * garbage collection (`fh store gc`) also needs s3:DeleteObject.
 */
/**
 * What S3Store needs of a client: `send(command)`, which an `S3Client` of @aws-sdk/client-s3 v3 has.
 * Our own structural type, not `S3Client`, because @aws-sdk/client-s3 is an optional peer: a public
 * declaration naming it would not compile (skipLibCheck: false) in an app that does not install it.
 */
export interface S3ClientLike {
  send(command: object): Promise<unknown>;
}

export interface S3StoreOptions {
  bucket: string;
  /** Key prefix, e.g. `fh/prod`: objects are `<prefix>/transcripts/…`. Default none. */
  prefix?: string;
  /** A configured `S3Client` (any object with its `send`); the options below are then ignored. */
  client?: S3ClientLike;
  region?: string;
  /** An S3-compatible server's URL, e.g. `http://127.0.0.1:9000`. */
  endpoint?: string;
  /** Path-style URLs (`endpoint/bucket/key`). Default: true with `endpoint`, false for AWS. */
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** S3's bucket naming rules (the common subset every S3-compatible server accepts). */
/**
 * The AWS SDK, loaded on first use: every worker imports this module through the worker entry point,
 * and only those with an S3 store should pay for loading the SDK (~70 ms).
 */
type AwsS3 = typeof import('@aws-sdk/client-s3');
let awsS3: AwsS3 | undefined;
const aws = (): AwsS3 => (awsS3 ??= loadAws());

/**
 * @aws-sdk/client-s3 is an optional peer dependency (only S3 users install it): without it, S3Store
 * says what to install instead of failing with a module-not-found from deep inside a call.
 */
function loadAws(): AwsS3 {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@aws-sdk/client-s3') as AwsS3;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes('@aws-sdk/client-s3')) {
      throw new S3ClientMissingError();
    }
    throw err;
  }
}

export class S3ClientMissingError extends FabricError {
  constructor() {
    super('S3_CLIENT_MISSING', 'S3Store needs the AWS SDK, an optional dependency: install it with `npm install @aws-sdk/client-s3` (v3)');
  }
}

const DELETE_BATCH = 1_000;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const SAFE_KEY = /^[A-Za-z0-9_\-/.]+$/;

const optionsSchema = z.object({
  bucket: z.string().regex(BUCKET, 'must be an S3 bucket name: 3-63 lowercase letters, digits, dots and hyphens'),
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_\-/.]*$/, 'may hold only letters, digits and _-/.')
    .refine((p) => !p.startsWith('/') && !p.includes('..') && !p.includes('//'), 'must not start with / or hold .. or //')
    .optional(),
  client: z.custom<S3ClientLike>((v) => typeof (v as { send?: unknown } | null)?.send === 'function', 'must be an S3Client from @aws-sdk/client-s3').optional(),
  region: z.string().min(1).optional(),
  endpoint: z.url().optional(),
  forcePathStyle: z.boolean().optional(),
  credentials: z.object({ accessKeyId: z.string().min(1), secretAccessKey: z.string().min(1), sessionToken: z.string().optional() }).optional(),
});

/**
 * An S3 request that failed for another reason than a missing key (network, credentials, throttling).
 * Deliberately not a FabricError: an activity that hits it fails retryably, and Temporal retries it.
 */
export class S3StoreRequestError extends Error {
  readonly code = 'STORE_S3_REQUEST';

  constructor(
    readonly operation: string,
    readonly location: string,
    cause: unknown,
  ) {
    const name = cause instanceof Error ? cause.name : 'Error';
    const code = httpStatus(cause);
    const status = code ? ` (HTTP ${code})` : '';
    super(`S3 store: ${operation} ${location} failed: ${name}${status}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'S3StoreRequestError';
    (this as { cause?: unknown }).cause = cause;
  }
}

export class S3Store implements TranscriptStore {
  readonly bucket: string;
  readonly prefix: string;
  readonly client: S3ClientLike;
  /** The same client, typed as the AWS SDK's, for this file's calls (never in a public declaration). */
  private readonly s3: S3Client;

  constructor(options: S3StoreOptions) {
    const opts = parseWith(optionsSchema, options, 'S3Store options') as S3StoreOptions;
    this.bucket = opts.bucket;
    this.prefix = opts.prefix ? opts.prefix.replace(/\/?$/, '/') : '';
    this.s3 = (opts.client as S3Client | undefined) ?? new (aws().S3Client)(clientConfig(opts));
    this.client = this.s3;
  }

  get location(): string {
    return `s3://${this.bucket}/${this.prefix}`;
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const Key = this.key(key);
    try {
      const res = await this.s3.send(new (aws().GetObjectCommand)({ Bucket: this.bucket, Key }));
      if (!res.Body) return new Uint8Array();
      return await res.Body.transformToByteArray();
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw new S3StoreRequestError('GetObject', `s3://${this.bucket}/${Key}`, err);
    }
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const Key = this.key(key);
    try {
      // A PUT replaces the object atomically: readers see the old blob or the new one, never half.
      await this.s3.send(new (aws().PutObjectCommand)({ Bucket: this.bucket, Key, Body: data, ContentType: 'application/octet-stream' }));
    } catch (err) {
      throw new S3StoreRequestError('PutObject', `s3://${this.bucket}/${Key}`, err);
    }
  }

  /**
   * Renews the object's LastModified (what a gc's grace period looks at) by copying it onto itself
   * with replaced metadata; S3 refuses a self-copy that changes nothing. The copy happens inside S3
   * (no bytes travel) and costs one PUT-class request. A missing key is not an error, as in the file store.
   */
  async touch(key: string): Promise<void> {
    const Key = this.key(key);
    try {
      await this.s3.send(
        new (aws().CopyObjectCommand)({
          Bucket: this.bucket,
          Key,
          CopySource: `${this.bucket}/${Key.split('/').map(encodeURIComponent).join('/')}`,
          MetadataDirective: 'REPLACE',
          Metadata: { 'fh-touched': new Date().toISOString() },
          ContentType: 'application/octet-stream',
        }),
      );
    } catch (err) {
      if (isMissing(err)) return;
      throw new S3StoreRequestError('CopyObject (touch)', `s3://${this.bucket}/${Key}`, err);
    }
  }

  /** ListObjectsV2 below the store's prefix, page by page (1,000 keys a request). */
  async *list(prefix: string): AsyncIterable<StoredBlob> {
    if (prefix && (!SAFE_KEY.test(prefix) || prefix.includes('..') || prefix.startsWith('/'))) throw new Error(`invalid store key prefix: ${prefix}`);
    const Prefix = this.prefix + prefix;
    let ContinuationToken: string | undefined;
    do {
      let page: import('@aws-sdk/client-s3').ListObjectsV2CommandOutput;
      try {
        page = await this.s3.send(new (aws().ListObjectsV2Command)({ Bucket: this.bucket, Prefix, ContinuationToken }));
      } catch (err) {
        throw new S3StoreRequestError('ListObjectsV2', `s3://${this.bucket}/${Prefix}`, err);
      }
      for (const o of page.Contents ?? []) {
        if (!o.Key?.startsWith(this.prefix)) continue;
        yield { key: o.Key.slice(this.prefix.length), size: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0) };
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  /** DeleteObjects in batches of 1,000 (S3's limit); a missing key counts as deleted, as S3 says. */
  async delete(keys: string[]): Promise<void> {
    const Keys = keys.map((k) => this.key(k));
    for (let i = 0; i < Keys.length; i += DELETE_BATCH) {
      const batch = Keys.slice(i, i + DELETE_BATCH);
      let errors: Array<{ Key?: string; Code?: string; Message?: string }>;
      try {
        const res = await this.s3.send(
          new (aws().DeleteObjectsCommand)({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
        );
        errors = res.Errors ?? [];
      } catch (err) {
        throw new S3StoreRequestError('DeleteObjects', `s3://${this.bucket}/${this.prefix}`, err);
      }
      if (errors.length > 0) {
        const first = errors[0]!;
        const cause = Object.assign(new Error(`${errors.length} of ${batch.length} keys not deleted; first: ${first.Key}: ${first.Code} ${first.Message ?? ''}`.trim()), {
          name: first.Code ?? 'DeleteError',
        });
        throw new S3StoreRequestError('DeleteObjects', `s3://${this.bucket}/${first.Key ?? this.prefix}`, cause);
      }
    }
  }

  private key(key: string): string {
    if (!SAFE_KEY.test(key) || key.includes('..') || key.startsWith('/')) throw new Error(`invalid store key: ${key}`);
    return this.prefix + key;
  }
}

function clientConfig(opts: S3StoreOptions): S3ClientConfig {
  const config: S3ClientConfig = {};
  if (opts.region) config.region = opts.region;
  else if (opts.endpoint && !process.env.AWS_REGION && !process.env.AWS_DEFAULT_REGION) config.region = 'us-east-1'; // S3-compatible servers ignore it, but the signer needs one
  if (opts.endpoint) config.endpoint = opts.endpoint;
  config.forcePathStyle = opts.forcePathStyle ?? opts.endpoint !== undefined;
  if (opts.credentials) config.credentials = opts.credentials;
  return config;
}

function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** A missing key (GetObject says NoSuchKey; HEAD-like answers only carry 404); a missing bucket is an error. */
function isMissing(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'NoSuchKey' || err.name === 'NotFound') return true;
  return httpStatus(err) === 404 && err.name !== 'NoSuchBucket';
}
