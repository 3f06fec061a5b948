/**
 * Strict input replay names what differs in a model call. Since the fh-prelude-first patch the model
 * calls carry the prelude by hash only, and its value is in the fhStorePrelude activity's input: the
 * comparison reads it from there.
 */
import { firstModelInputMismatch } from '../../src/audit/replay-inputs';
import { canonicalJson, hashString } from '../../src/core/hash';
import type { ModelActivityInput } from '../../src/wire/activity-contract';

const prelude = (system: string) => ({ system, tools: [] });
const hashOf = (v: unknown) => hashString(canonicalJson(v));
const call = (system: string): ModelActivityInput => ({ model: 'm', maxTokens: 10, prelude: { hash: hashOf(prelude(system)) }, base: null, delta: [] });

describe('firstModelInputMismatch with preludes stored ahead of the calls', () => {
  it('names the system prompt from the stored preludes', () => {
    const mismatch = firstModelInputMismatch([{ eventId: 7, seq: 1, input: call('old') }], [{ seq: 1, input: call('new') }], {
      recorded: new Map([[hashOf(prelude('old')), prelude('old')]]),
      current: new Map([[hashOf(prelude('new')), prelude('new')]]),
    });
    expect(mismatch).toMatchObject({ eventId: 7, call: 1, field: 'system prompt', recorded: 'old', current: 'new' });
  });

  it('without them it can only say the hash differs', () => {
    const mismatch = firstModelInputMismatch([{ eventId: 7, seq: 1, input: call('old') }], [{ seq: 1, input: call('new') }]);
    expect(mismatch).toMatchObject({ field: 'system prompt or tools' });
  });
});
