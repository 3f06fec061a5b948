/**
 * An experiment, not how anything runs: preloaded into our workers (FH_BENCH_LAZY_EXTSTORE=1), it makes
 * Temporal's external-storage runner return a pass's payloads at once when none is large enough to offload
 * (a store pass) or none is a reference (a retrieve pass). Temporal's runner builds an AbortController and
 * an `AbortSignal.any` for every pass before looking at the payloads, about ten passes per model call, and
 * `AbortSignal.any` is slow in Node (weak references the GC has to process). This measures what that
 * change in Temporal (build the batch signal only when a driver is called) would save us; the SDK never
 * patches Temporal.
 */
'use strict';
const runnerModule = require('@temporalio/common/lib/internal-non-workflow/external-storage-runner');
const { isReferencePayload } = require('@temporalio/common/lib/internal-non-workflow/extstore-helpers');
const { temporal } = require('@temporalio/proto');

const runner = runnerModule.ExternalStorageRunner.prototype;
const { store, retrieve } = runner;
const size = (payload) => temporal.api.common.v1.Payload.encode(payload).len;

runner.store = function lazyStore(payloads, options) {
  const threshold = this.externalStorage.payloadSizeThreshold;
  return payloads.some((p) => size(p) >= threshold) ? store.call(this, payloads, options) : Promise.resolve(payloads);
};
runner.retrieve = function lazyRetrieve(payloads, options) {
  return payloads.some(isReferencePayload) ? retrieve.call(this, payloads, options) : Promise.resolve(payloads);
};
