/**
 * The audit bundle's format (docs/audit.md#the-format): a ustar archive of
 *
 * - `manifest.json`: what the bundle holds (the schema below), every other part with its SHA-256;
 * - `manifest.sig.json` (optional): an Ed25519 signature over the manifest's exact bytes;
 * - `histories/NNNN.json`: each run's history as Temporal's proto-JSON;
 * - `histories/NNNN.chain`: the run's event hash chain, one hex link per line (event i: line i);
 * - `blobs/<store key>`: every store blob the histories refer to, byte for byte.
 *
 * The chain: h_1 = sha256(e_1), h_i = sha256(h_{i-1} ‖ e_i), where h is the 32-byte digest and e_i the
 * canonical bytes of event i: its proto-JSON object with keys sorted at every level, no whitespace,
 * UTF-8. The manifest records each chain's last link (its head), so the chain files are checked twice.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../core/hash';
import { BundleFormatError } from './errors';

export const BUNDLE_FORMAT = 'fabric-harness.audit-bundle';
export const BUNDLE_VERSION = 1;
export const MANIFEST = 'manifest.json';
export const SIGNATURE = 'manifest.sig.json';

const sha = z.string().regex(/^[0-9a-f]{64}$/);

const run = z.object({
  workflowId: z.string(),
  runId: z.string(),
  workflowType: z.string().optional(),
  /** Why it is in the bundle: the root, a continue-as-new of the run before, or a child of a run. */
  role: z.enum(['root', 'continued', 'child']),
  /** For a child: the parent's run and the event that started it. */
  parent: z.object({ workflowId: z.string(), runId: z.string(), eventId: z.number() }).optional(),
  /** The history part and its chain part. */
  history: z.string(),
  chain: z.string(),
  events: z.number().int().nonnegative(),
  /** The chain's last link (hex). */
  chainHead: sha,
  status: z.string(),
  startedAt: z.string().optional(),
  closedAt: z.string().optional(),
});

export const manifestSchema = z.object({
  format: z.literal(BUNDLE_FORMAT),
  version: z.literal(BUNDLE_VERSION),
  root: z.object({ workflowId: z.string(), namespace: z.string() }),
  /** The SDK that exported it. */
  exporter: z.object({ sdk: z.string() }),
  /** The worker build ids (and deployment versions) the histories record, when they record any. */
  agentSet: z.object({ buildIds: z.array(z.string()), deploymentVersions: z.array(z.string()) }),
  runs: z.array(run),
  /** Store blobs in the bundle: the store's key and the part holding it. */
  blobs: z.array(z.object({ key: z.string(), part: z.string() })),
  /** Blobs a history refers to that the store no longer had at export. */
  missing: z.array(z.object({ key: z.string(), referencedBy: z.string() })),
  /** Every part but the manifest and the signature, by name: its SHA-256 and size. */
  parts: z.record(z.string(), z.object({ sha256: sha, bytes: z.number().int().nonnegative() })),
});

export type BundleManifest = z.infer<typeof manifestSchema>;
export type BundleRun = BundleManifest['runs'][number];

export const signatureSchema = z.object({
  algorithm: z.literal('ed25519'),
  /** sha256 of the public key's DER (SubjectPublicKeyInfo), hex, prefixed `sha256:`. */
  keyFingerprint: z.string(),
  /** The public key (PEM) the signature verifies with; an auditor checks it against the one they trust. */
  publicKey: z.string(),
  signedAt: z.string(),
  /** Base64 signature over manifest.json's bytes. */
  signature: z.string(),
});
export type BundleSignature = z.infer<typeof signatureSchema>;

export function parseManifest(bytes: Uint8Array | undefined): BundleManifest {
  if (!bytes) throw new BundleFormatError(`it has no ${MANIFEST}`);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw new BundleFormatError(`${MANIFEST} is not JSON (${(err as Error).message})`);
  }
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new BundleFormatError(`${MANIFEST}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The chain links (hex) of a history's proto-JSON events, in order. */
export function eventChain(events: readonly unknown[]): string[] {
  const links: string[] = [];
  let prev: Buffer = Buffer.alloc(0);
  for (const e of events) {
    prev = createHash('sha256').update(prev).update(canonicalJson(e), 'utf8').digest();
    links.push(prev.toString('hex'));
  }
  return links;
}

/** The event ids of a proto-JSON history, in order (the chain's line i is event ids[i]). */
export function eventIds(events: readonly unknown[]): number[] {
  return events.map((e, i) => Number((e as { eventId?: unknown }).eventId ?? i + 1));
}

export const historyPart = (i: number): string => `histories/${String(i).padStart(4, '0')}.json`;
export const chainPart = (i: number): string => `histories/${String(i).padStart(4, '0')}.chain`;
export const blobPart = (key: string): string => `blobs/${key}`;
