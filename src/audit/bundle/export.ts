/**
 * `fh audit export`: every run of a workflow or session (continue-as-new chain, children), each history
 * as proto-JSON with its event hash chain, every store blob they refer to, and a manifest with each
 * part's SHA-256; optionally signed. The same closed runs give the same bytes (only a signature's time
 * differs): entries are sorted, the manifest is built in a fixed order, and nothing records when.
 */
import type { Client } from '@temporalio/client';
import type { TranscriptStore } from '../../activities/stores/transcript-store';
import { historyToJSONString, parseHistoryJSON, type History } from '../history-file';
import { isoTime } from '../history-fields';
import { BundleExportError } from './errors';
import {
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  MANIFEST,
  SIGNATURE,
  blobPart,
  chainPart,
  eventChain,
  historyPart,
  sha256Hex,
  type BundleManifest,
  type BundleRun,
} from './format';
import { blobReferences, historyReferences, type BlobReference } from './references';
import { fetchRuns, type FetchedRun } from './runs';
import { signManifest } from './sign';
import { writeTar, type TarEntry } from './tar';

export interface ExportOptions {
  client: Client;
  namespace: string;
  /** The workers' store (where transcripts, tool results and offloaded payloads are). */
  store?: TranscriptStore;
  /** A PEM Ed25519 private key: the manifest is signed with it. */
  signingKey?: string | Buffer;
  /** The signature's time (default: now). */
  signedAt?: Date;
}

export interface ExportResult {
  bytes: Buffer;
  manifest: BundleManifest;
  /** Required blobs the store did not have (listed in the manifest too). */
  missing: BundleManifest['missing'];
}

const SAFE_KEY = /^[A-Za-z0-9_\-/.]+$/;
const READ_CONCURRENCY = 16;

export async function exportBundle(workflowId: string, opts: ExportOptions): Promise<ExportResult> {
  const runs = await fetchRuns(opts.client, workflowId);
  return buildBundle(runs, { ...opts, rootId: workflowId });
}

/** The bundle of runs already fetched (the runs' order is the bundle's). */
export async function buildBundle(
  runs: FetchedRun[],
  opts: { namespace: string; rootId: string; store?: TranscriptStore; signingKey?: string | Buffer; signedAt?: Date },
): Promise<ExportResult> {
  const entries: TarEntry[] = [];
  const manifestRuns: BundleRun[] = [];
  const refs: BlobReference[] = [];
  const buildIds = new Set<string>();
  const deployments = new Set<string>();
  runs.forEach((run, i) => {
    // Keys sorted at every level: the server sends map fields (memo, search attributes, headers) in no
    // fixed order, and two exports of one run must be the same bytes. Still Temporal's proto-JSON.
    const json = sortKeys(JSON.parse(historyToJSONString(run.history))) as { events: unknown[] };
    const text = `${JSON.stringify(json, null, 2)}\n`;
    const links = eventChain(json.events);
    const parsed = parseHistoryJSON(text, historyPart(i));
    entries.push({ name: historyPart(i), data: Buffer.from(text) }, { name: chainPart(i), data: Buffer.from(links.map((l) => `${l}\n`).join('')) });
    refs.push(...historyReferences(parsed.events ?? [], historyPart(i)));
    noteAgentSet(parsed, buildIds, deployments);
    manifestRuns.push(describeRun(run, parsed, i, links));
  });

  const { blobs, missing } = await collectBlobs(refs, opts.store);
  for (const [key, data] of blobs) entries.push({ name: blobPart(key), data });

  const parts: BundleManifest['parts'] = {};
  for (const e of [...entries].sort((a, b) => (a.name < b.name ? -1 : 1))) parts[e.name] = { sha256: sha256Hex(e.data), bytes: e.data.length };
  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    root: { workflowId: opts.rootId, namespace: opts.namespace },
    exporter: { sdk: sdkVersion() },
    agentSet: { buildIds: [...buildIds].sort(), deploymentVersions: [...deployments].sort() },
    runs: manifestRuns,
    blobs: [...blobs.keys()].sort().map((key) => ({ key, part: blobPart(key) })),
    missing,
    parts,
  };
  const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  entries.push({ name: MANIFEST, data: manifestBytes });
  if (opts.signingKey) {
    const sig = signManifest(manifestBytes, opts.signingKey, opts.signedAt);
    entries.push({ name: SIGNATURE, data: Buffer.from(`${JSON.stringify(sig, null, 2)}\n`) });
  }
  return { bytes: writeTar(entries), manifest, missing };
}

function describeRun(run: FetchedRun, h: History, i: number, links: string[]): BundleRun {
  const events = h.events ?? [];
  const first = events[0];
  const last = events[events.length - 1];
  const status = statusOf(last);
  return {
    workflowId: run.workflowId,
    runId: run.runId,
    ...(first?.workflowExecutionStartedEventAttributes?.workflowType?.name ? { workflowType: first.workflowExecutionStartedEventAttributes.workflowType.name } : {}),
    role: run.role,
    ...(run.parent ? { parent: run.parent } : {}),
    history: historyPart(i),
    chain: chainPart(i),
    events: events.length,
    chainHead: links[links.length - 1] ?? sha256Hex(''),
    status,
    ...(isoTime(first?.eventTime) ? { startedAt: isoTime(first?.eventTime)! } : {}),
    ...(status !== 'running' && isoTime(last?.eventTime) ? { closedAt: isoTime(last?.eventTime)! } : {}),
  };
}

function statusOf(e: NonNullable<History['events']>[number] | undefined): string {
  if (!e) return 'running';
  if (e.workflowExecutionCompletedEventAttributes) return 'completed';
  if (e.workflowExecutionFailedEventAttributes) return 'failed';
  if (e.workflowExecutionContinuedAsNewEventAttributes) return 'continued_as_new';
  if (e.workflowExecutionTerminatedEventAttributes) return 'terminated';
  if (e.workflowExecutionCanceledEventAttributes) return 'canceled';
  if (e.workflowExecutionTimedOutEventAttributes) return 'timed_out';
  return 'running';
}

function noteAgentSet(h: History, buildIds: Set<string>, deployments: Set<string>): void {
  for (const e of h.events ?? []) {
    const a = e.workflowTaskCompletedEventAttributes;
    if (!a) continue;
    const id = a.workerVersion?.buildId || a.deploymentVersion?.buildId;
    if (id) buildIds.add(id);
    if (a.deploymentVersion?.deploymentName) deployments.add(`${a.deploymentVersion.deploymentName}.${a.deploymentVersion.buildId ?? ''}`);
  }
}

/** Fetches every referenced blob the store has, following the references inside each, breadth first. */
async function collectBlobs(
  initial: BlobReference[],
  store: TranscriptStore | undefined,
): Promise<{ blobs: Map<string, Buffer>; missing: BundleManifest['missing'] }> {
  const blobs = new Map<string, Buffer>();
  const tried = new Set<string>();
  const missing = new Map<string, string>();
  let queue = initial;
  while (queue.length) {
    const next: BlobReference[] = [];
    const todo = queue.filter((r) => {
      if (!SAFE_KEY.test(r.key) || r.key.includes('..')) return false;
      if (tried.has(r.key)) {
        if (r.required && !blobs.has(r.key) && !missing.has(r.key)) missing.set(r.key, r.from);
        return false;
      }
      tried.add(r.key);
      return true;
    });
    for (let i = 0; i < todo.length; i += READ_CONCURRENCY) {
      const batch = todo.slice(i, i + READ_CONCURRENCY);
      const got = await Promise.all(
        batch.map(async (r) => {
          if (!store) return undefined;
          try {
            return await store.get(r.key);
          } catch (err) {
            throw new BundleExportError(`cannot read store blob ${r.key} (${r.from}): ${(err as Error).message}`);
          }
        }),
      );
      batch.forEach((r, k) => {
        const bytes = got[k];
        if (!bytes) {
          if (r.required) missing.set(r.key, r.from);
          return;
        }
        blobs.set(r.key, Buffer.from(bytes));
        next.push(...blobReferences(r.key, bytes));
      });
    }
    queue = next;
  }
  // A required key first met as a candidate and absent: still missing.
  for (const r of initial) if (r.required && !blobs.has(r.key) && !missing.has(r.key) && SAFE_KEY.test(r.key)) missing.set(r.key, r.from);
  const list = [...missing].filter(([k]) => !blobs.has(k)).sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, referencedBy]) => ({ key, referencedBy }));
  return { blobs: new Map([...blobs].sort(([a], [b]) => (a < b ? -1 : 1))), missing: list };
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!v || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, sortKeys(o[k])]));
}

function sdkVersion(): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('../../../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
