/** fh store gc: remove store blobs that no retained workflow history refers to. */
import { S3Store } from '../../activities/stores/s3-store';
import { parseDuration, type SweepReport } from '../../activities/stores/store-gc';
import type { CollectableStore } from '../../activities/stores/transcript-store';
import { collectStoreGarbage, GC_FETCH_CONCURRENCY, GC_MAX_FETCH_CONCURRENCY } from '../../client/collect-garbage';
import { flag, int, JSON_OPTION, str, type Options, type Parsed } from '../args';
import { asCliError, connect, printJson, STORE_OPTION, storeFrom, type Command, type Io } from '../context';
import { EXIT, oneLine, usage } from '../errors';

const DEFAULT_GRACE = '24h';

/** The S3 store options, read as the workers read them (FH_S3_BUCKET, FH_S3_PREFIX, AWS_ENDPOINT_URL_S3). */
export const S3_OPTIONS: Options = {
  's3-bucket': { type: 'string', value: '<bucket>', help: 'collect this S3 bucket instead of a store directory', env: 'FH_S3_BUCKET' },
  's3-prefix': { type: 'string', value: '<prefix>', help: "the workers' key prefix in the bucket", env: 'FH_S3_PREFIX' },
  's3-endpoint': { type: 'string', value: '<url>', help: 'an S3-compatible server (MinIO, R2); path-style URLs', env: 'AWS_ENDPOINT_URL_S3' },
};

export const storeCommand: Command = {
  name: 'store',
  summary: 'store maintenance: `fh store gc` removes blobs no retained history refers to',
  usage: [
    'store gc [--store-dir <dir>] [--older-than 24h] [--concurrency 8] [--dry-run] [--json]',
    'store gc --s3-bucket <bucket> [--s3-prefix <prefix>] [--s3-endpoint <url>] [--older-than 24h] [--dry-run] [--json]',
  ],
  description: [
    'Marks every blob that a workflow of the namespace refers to (open runs, and closed runs the namespace still retains:',
    'everything its visibility lists), then removes the unreferenced blobs older than --older-than.',
    "Run it against the namespace whose workers use this store; a store shared by several namespaces must not be collected",
    "by one of them. Histories exported to files (fh history export) are not seen: keep a copy of the store with them.",
    'An S3 store (--s3-bucket, or FH_S3_BUCKET / FH_S3_PREFIX as the workers read them) takes its region and credentials',
    'from the standard AWS environment (AWS_REGION, AWS_ACCESS_KEY_ID, AWS_PROFILE, …) and needs s3:ListBucket and s3:DeleteObject.',
  ].join('\n'),
  connects: true,
  options: {
    ...STORE_OPTION,
    ...S3_OPTIONS,
    'older-than': {
      type: 'string',
      value: '<duration>',
      help: 'grace period: keep unreferenced blobs younger than this (90s, 30m, 12h, 7d)',
      default: DEFAULT_GRACE,
    },
    'dry-run': { type: 'boolean', help: 'list what would be removed; remove nothing' },
    concurrency: {
      type: 'string',
      value: '<n>',
      help: `histories fetched at once while marking, 1 to ${GC_MAX_FETCH_CONCURRENCY}; lower it for a server that rate-limits reads`,
      default: String(GC_FETCH_CONCURRENCY),
    },
    ...JSON_OPTION,
  },
  examples: [
    'fh store gc --dry-run',
    'fh store gc --store-dir /var/lib/fh/store --older-than 7d',
    'fh store gc --s3-bucket acme-agents --s3-prefix fh/prod --older-than 7d',
  ],
  run: (p, io) => runStore(p, io),
};

async function runStore(p: Parsed, io: Io): Promise<number> {
  const [sub, ...extra] = p.positionals;
  if (sub !== 'gc') throw usage(sub ? `unknown store command '${sub}'; the store command has: gc` : 'say what to do: fh store gc');
  if (extra.length) throw usage(`unexpected argument '${extra[0]}' (fh store gc)`);
  const graceText = str(p, 'older-than') ?? DEFAULT_GRACE;
  const olderThanMs = parseDuration(graceText);
  if (olderThanMs === undefined) throw usage(`--older-than must be a duration like 90s, 30m, 12h or 7d; got '${graceText}'`);
  const concurrency = int(p, 'concurrency', GC_FETCH_CONCURRENCY, 1);
  if (concurrency > GC_MAX_FETCH_CONCURRENCY) throw usage(`--concurrency must be an integer from 1 to ${GC_MAX_FETCH_CONCURRENCY}, got '${concurrency}'`);
  const store = gcStoreFrom(p);
  if ('checked' in store) await (store as { checked(): Promise<void> }).checked(); // refuses a file store that is not private before anything is read from it

  const c = await connect(p);
  try {
    const retention = await namespaceRetention(c.client, c.settings.namespace);
    const { histories, vanished, ...report } = await collectStoreGarbage(c.client, { store, olderThanMs, dryRun: flag(p, 'dry-run'), concurrency });
    if (flag(p, 'json')) printJson(io, { ...report, namespace: c.settings.namespace, retention, histories, vanished, olderThanMs });
    else io.out(render(report, c.settings.namespace, retention, histories, graceText));
    return EXIT.OK;
  } catch (err) {
    throw asCliError(err, { settings: c.settings });
  } finally {
    await c.close();
  }
}

/** --s3-bucket (or FH_S3_BUCKET when no --store-dir is given): the S3 store; else the file store. */
export function gcStoreFrom(p: Parsed, env: NodeJS.ProcessEnv = process.env): CollectableStore {
  const bucket = str(p, 's3-bucket');
  if (bucket && str(p, 'store-dir')) throw usage('give --store-dir or --s3-bucket, not both');
  const s3Bucket = bucket ?? (str(p, 'store-dir') ? undefined : env.FH_S3_BUCKET || undefined);
  if (!s3Bucket) {
    if (str(p, 's3-prefix') || str(p, 's3-endpoint')) throw usage('--s3-prefix and --s3-endpoint need --s3-bucket (or FH_S3_BUCKET)');
    return storeFrom(p);
  }
  const prefix = str(p, 's3-prefix') ?? (env.FH_S3_PREFIX || undefined);
  const endpoint = str(p, 's3-endpoint') ?? (env.AWS_ENDPOINT_URL_S3 || undefined);
  try {
    return new S3Store({ bucket: s3Bucket, ...(prefix ? { prefix } : {}), ...(endpoint ? { endpoint } : {}) });
  } catch (err) {
    const e = err as { code?: string; field?: string; message?: string };
    if (e.code === 'INVALID_INPUT') throw usage(`--s3-${e.field === 'endpoint' ? 'endpoint' : e.field === 'prefix' ? 'prefix' : 'bucket'}: ${oneLine(e.message ?? '')}`);
    throw err;
  }
}

async function namespaceRetention(client: import('@temporalio/client').Client, namespace: string): Promise<string | null> {
  try {
    const ns = await client.workflowService.describeNamespace({ namespace });
    const seconds = Number(ns.config?.workflowExecutionRetentionTtl?.seconds ?? 0);
    return seconds ? `${Math.round(seconds / 3600)}h` : null;
  } catch {
    return null; // an API key scoped to the namespace may not describe it; the listing is what counts
  }
}

function render(r: SweepReport, namespace: string, retention: string | null, histories: number, grace: string): string {
  const mb = (bytes: number) => (bytes / 1_048_576).toFixed(2);
  return [
    `store ${r.location}: ${r.blobs} blobs (${mb(r.bytes)} MB); ${r.referenced} referenced by the ${histories} histories of namespace '${namespace}'` +
      ` (retention ${retention ?? 'unknown'}); ${r.young} unreferenced but younger than ${grace}`,
    `${r.dryRun ? 'would remove' : 'removed'} ${r.removed.length} blobs (${mb(r.removedBytes)} MB)`,
    ...r.removed.map((k) => `  ${k}`),
  ].join('\n');
}
