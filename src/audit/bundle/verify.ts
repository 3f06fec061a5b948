/**
 * `fh audit verify`: a bundle checked offline, with no server and no store, in this order (the first
 * failure is reported, naming the part and, for a history, the event):
 *
 * 1. the signature over manifest.json (when signed; required when a trusted public key is given);
 * 2. every part against its SHA-256 in the manifest, and no part the manifest does not list;
 * 3. each history's event hash chain against its chain part and the manifest's chain head;
 * 4. every blob a history (or a blob) requires is in the bundle, or listed as missing at export, and
 *    content-addressed blobs (offloaded payloads, tool results) hash to the name they are stored under;
 * 5. with agent modules: each history replays against that code (the replay check of `fh replay`).
 */
import type { KeyObject } from 'node:crypto';
import { historyToJSONString } from '../history-file';
import { BundleIncompleteError, BundleReplayDivergedError, BundleSignatureError, BundleTamperedError } from './errors';
import { MANIFEST, SIGNATURE, eventChain, eventIds, sha256Hex, type BundleManifest, type BundleSignature } from './format';
import { openBundle, runHistory, type OpenBundle } from './read';
import { blobReferences, historyReferences } from './references';
import { checkSignature } from './sign';

export interface VerifyOptions {
  /** The signer's public key: the bundle must be signed with it. */
  publicKey?: KeyObject;
  /** Agent modules: each history must replay against them. */
  agents?: string[];
}

export interface VerifyReport {
  ok: true;
  root: string;
  runs: number;
  events: number;
  parts: number;
  blobs: number;
  /** Blobs the store no longer had at export (the bundle says so; their content is not in it). */
  missing: BundleManifest['missing'];
  signed?: { keyFingerprint: string; signedAt: string; trustedKey: boolean };
  replayed?: number;
}

export async function verifyBundle(bytes: Uint8Array, opts: VerifyOptions = {}): Promise<VerifyReport> {
  // The signature is checked over the manifest's bytes before they are parsed (see `beforeManifest`).
  const b = openBundle(bytes, { beforeManifest: (manifestBytes, signature) => checkSigned(manifestBytes, signature, opts.publicKey) });
  checkParts(b);
  const events = checkChains(b);
  checkReferences(b);
  const replayed = opts.agents?.length ? await checkReplay(b, opts.agents) : undefined;
  const m = b.manifest;
  return {
    ok: true,
    root: m.root.workflowId,
    runs: m.runs.length,
    events,
    parts: Object.keys(m.parts).length,
    blobs: m.blobs.length,
    missing: m.missing,
    ...(b.signature ? { signed: { keyFingerprint: b.signature.keyFingerprint, signedAt: b.signature.signedAt, trustedKey: opts.publicKey !== undefined } } : {}),
    ...(replayed !== undefined ? { replayed } : {}),
  };
}

function checkSigned(manifestBytes: Buffer | undefined, signature: BundleSignature | undefined, trusted: KeyObject | undefined): void {
  if (!signature) {
    if (trusted) throw new BundleSignatureError('the bundle is not signed, and a public key was given');
    return;
  }
  // No manifest at all is the manifest parser's to name (BUNDLE_INVALID), as for an unsigned bundle.
  if (manifestBytes) checkSignature(manifestBytes, signature, trusted);
}

function checkParts(b: OpenBundle): void {
  const parts = b.manifest.parts;
  for (const name of [...b.entries.keys()].sort()) {
    if (name !== MANIFEST && name !== SIGNATURE && !(name in parts)) throw new BundleTamperedError(name, 'the manifest does not list it');
  }
  for (const name of Object.keys(parts).sort()) {
    const data = b.entries.get(name);
    if (!data) throw new BundleTamperedError(name, 'it is listed in the manifest but absent');
    const actual = sha256Hex(data);
    if (actual === parts[name]!.sha256 && data.length === parts[name]!.bytes) continue;
    const run = b.manifest.runs.find((r) => r.history === name);
    // A changed history: name the first event whose chain link differs from the recorded chain.
    const eventId = run ? firstChangedEvent(b, run.history, run.chain) : undefined;
    throw new BundleTamperedError(name, `its sha256 is ${actual}, the manifest records ${parts[name]!.sha256}`, eventId);
  }
  for (const blob of b.manifest.blobs) if (!(blob.part in parts)) throw new BundleTamperedError(blob.part, `blob ${blob.key} is not among the manifest's parts`);
  for (const run of b.manifest.runs) {
    for (const p of [run.history, run.chain]) if (!(p in parts)) throw new BundleTamperedError(p, `run ${run.workflowId}/${run.runId} names it, but it is not among the manifest's parts`);
  }
}

function firstChangedEvent(b: OpenBundle, historyName: string, chainName: string): number | undefined {
  try {
    const events = (JSON.parse(b.entries.get(historyName)!.toString('utf8')) as { events: unknown[] }).events;
    const recorded = (b.entries.get(chainName)?.toString('utf8') ?? '').split('\n');
    const links = eventChain(events);
    const ids = eventIds(events);
    const i = links.findIndex((l, k) => l !== recorded[k]);
    return i >= 0 ? ids[i] : undefined;
  } catch {
    return undefined; // not JSON any more: the part is named without an event
  }
}

/** Recomputes each history's chain; returns the number of events checked. */
function checkChains(b: OpenBundle): number {
  let total = 0;
  for (const run of b.manifest.runs) {
    const text = b.entries.get(run.history)!.toString('utf8');
    let events: unknown[];
    try {
      events = (JSON.parse(text) as { events: unknown[] }).events;
      if (!Array.isArray(events)) throw new Error('no events array');
    } catch (err) {
      throw new BundleTamperedError(run.history, `it is not a history (${(err as Error).message})`);
    }
    const links = eventChain(events);
    const ids = eventIds(events);
    const recorded = b.entries.get(run.chain)!.toString('utf8').split('\n').filter(Boolean);
    const i = links.findIndex((l, k) => l !== recorded[k]);
    if (i >= 0) throw new BundleTamperedError(run.history, `the event's chain link is ${links[i]}, ${run.chain} records ${recorded[i] ?? 'nothing'}`, ids[i]);
    if (recorded.length !== links.length || run.events !== links.length) {
      throw new BundleTamperedError(run.history, `it has ${links.length} events; ${run.chain} records ${recorded.length}, the manifest ${run.events}`);
    }
    if (run.chainHead !== (links[links.length - 1] ?? sha256Hex(''))) throw new BundleTamperedError(run.chain, `its head is ${links[links.length - 1]}, the manifest records ${run.chainHead}`);
    // The proto-JSON must still be a history that parses (and writes back) as Temporal's.
    historyToJSONString(runHistory(b, run));
    total += links.length;
  }
  return total;
}

const CONTENT_ADDRESSED: Array<[RegExp, string]> = [
  [/^payloads\/([0-9a-f]{64})$/, 'payload'],
  [/^tool-results\/[0-9a-f]{2}\/([0-9a-f]{64})$/, 'tool result'],
];

function checkReferences(b: OpenBundle): void {
  const held = new Set(b.manifest.blobs.map((x) => x.key));
  const missing = new Set(b.manifest.missing.map((x) => x.key));
  const need = (key: string, from: string) => {
    if (!held.has(key) && !missing.has(key)) throw new BundleIncompleteError(key, from);
  };
  for (const run of b.manifest.runs) {
    for (const r of historyReferences(runHistory(b, run).events ?? [], run.history)) if (r.required) need(r.key, r.from);
  }
  for (const blob of b.manifest.blobs) {
    const data = b.entries.get(blob.part)!;
    for (const [shape, what] of CONTENT_ADDRESSED) {
      const m = shape.exec(blob.key);
      if (m && sha256Hex(data) !== m[1]) throw new BundleTamperedError(blob.part, `the ${what} does not hash to its name ${m[1]}`);
    }
    for (const r of blobReferences(blob.key, data)) if (r.required) need(r.key, r.from);
  }
}

async function checkReplay(b: OpenBundle, agents: string[]): Promise<number> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { bundleForReplay, replayHistory } = require('../replay') as typeof import('../replay');
  /* eslint-enable @typescript-eslint/no-require-imports */
  // Bundled once for every run, with the command trace: a run that diverges is explained by the same replay.
  const workflowBundle = await bundleForReplay(agents);
  for (const run of b.manifest.runs) {
    const result = await replayHistory(runHistory(b, run), { agents, store: b.store, workflowId: run.workflowId, runId: run.runId, workflowBundle });
    if (!result.ok) throw new BundleReplayDivergedError(run.history, result.eventId, result.explanation ?? result.error ?? 'diverged');
  }
  return b.manifest.runs.length;
}
