/**
 * Payload decoding for the audit: with the default payload converter (or the given data converter).
 * Payloads offloaded to external storage are resolved through `store` / the data converter's external
 * storage; without one (or when the blob is gone) they become an OffloadedValue ("[offloaded]").
 */
import { defaultPayloadConverter, type DataConverter, type Payload, type PayloadConverter } from '@temporalio/common';
import {
  decodeReferencePayload,
  ExternalStorageRunner,
  isReferencePayload,
} from '@temporalio/common/lib/internal-non-workflow';
import { externalStorageFor } from '../activities/stores/external-storage';
import type { TranscriptStore } from '../activities/stores/transcript-store';
import type { OffloadedValue } from './records';

/** Where the payloads of a history are decoded and fetched from. */
export interface PayloadSources {
  /** The transcript store the workers use: resolves payloads offloaded to external storage. */
  store?: TranscriptStore;
  /** A data converter (payload converter, codecs, external storage) when the workers use a custom one. */
  dataConverter?: Pick<DataConverter, 'payloadCodecs' | 'externalStorage'> & { payloadConverter?: PayloadConverter };
}

export class PayloadReader {
  private readonly converter: PayloadConverter;
  private readonly codecs: NonNullable<DataConverter['payloadCodecs']>;
  private readonly runner: ExternalStorageRunner | undefined;

  constructor(opts: PayloadSources) {
    this.converter = opts.dataConverter?.payloadConverter ?? defaultPayloadConverter;
    this.codecs = opts.dataConverter?.payloadCodecs ?? [];
    const external = opts.dataConverter?.externalStorage ?? (opts.store ? externalStorageFor(opts.store) : undefined);
    this.runner = external ? new ExternalStorageRunner(external) : undefined;
  }

  async values(payloads: Payload[] | null | undefined): Promise<unknown[]> {
    return Promise.all((payloads ?? []).map((p) => this.value(p)));
  }

  /** Decodes one payload: external storage first, then codecs (in reverse), then the converter. */
  async value(payload: Payload | null | undefined): Promise<unknown> {
    if (!payload) return undefined;
    let p = payload;
    if (isReferencePayload(p)) {
      const ref = safeRef(p);
      if (!this.runner) return offloaded(ref);
      try {
        [p] = (await this.runner.retrieve([p])) as [Payload];
      } catch (err) {
        return offloaded(ref, err instanceof Error ? err.message : String(err));
      }
    }
    try {
      for (const codec of [...this.codecs].reverse()) [p] = (await codec.decode([p])) as [Payload];
      return this.converter.fromPayload(p);
    } catch (err) {
      return { $undecodable: err instanceof Error ? err.message : String(err) };
    }
  }
}

type Reference = ReturnType<typeof decodeReferencePayload>;

function safeRef(p: Payload): Reference {
  try {
    return decodeReferencePayload(p);
  } catch {
    return { driverName: '?', claimData: {}, sizeBytes: 0 };
  }
}

function offloaded(ref: Reference, error?: string): OffloadedValue {
  return {
    $offloaded: {
      driver: ref.driverName,
      ...(ref.claimData.key ? { key: ref.claimData.key } : {}),
      sizeBytes: ref.sizeBytes,
      ...(error ? { error } : {}),
    },
  };
}

export function isOffloaded(v: unknown): v is OffloadedValue {
  return typeof v === 'object' && v !== null && '$offloaded' in v;
}

/** A decoded object (not an array, not offloaded, not undecodable): an activity's input or result as sent. */
export function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isOffloaded(v) && !('$undecodable' in v);
}
