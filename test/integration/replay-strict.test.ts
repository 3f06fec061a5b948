/**
 * `replayHistory(…, { strictInputs: true })`: the recorded calculator run against code that makes the
 * same decisions but would send the model other inputs. A plain replay says ok for each; the strict
 * one names the first model call that differs and the field.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { replayHistory } from '../../src/audit/replay';
import { parseHistoryJSON, type History } from '../../src/audit/history-file';

// The calculator run recorded by the current release (test/histories/<version>/).
const HISTORIES = path.resolve(__dirname, '../histories', (require('../../package.json') as { version: string }).version);
const variant = (name: string) => path.resolve(__dirname, '../fixtures/input-variants', `${name}.ts`);

describe('replay with strict inputs', () => {
  let history: History;
  beforeAll(async () => {
    history = parseHistoryJSON(await fs.readFile(path.join(HISTORIES, 'calculator-tools.json'), 'utf8'));
  });

  it('the same code: ok, every model call compared', async () => {
    const r = await replayHistory(history, { agents: variant('same'), strictInputs: true, workflowId: 'recorded-calculator' });
    expect(r).toMatchObject({ ok: true, strictInputs: { compared: 3, unreadable: 0 } });
  });

  it.each([
    ['system', 'system prompt', /the system prompt differs at character \d+/],
    ['tool', 'tools', /tool 'add' has a different description or input schema/],
    ['max-tokens', 'max tokens', /max_tokens differs: recorded 4096, the code now sends 1000/],
  ])('a changed %s: plain replay ok, strict replay names the field', async (name, field, why) => {
    const plain = await replayHistory(history, { agents: variant(name), workflowId: 'recorded-calculator' });
    expect(plain.ok).toBe(true); // the false confidence strict inputs exist for
    const strict = await replayHistory(history, { agents: variant(name), strictInputs: true, workflowId: 'recorded-calculator' });
    const first = history.events!.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fhModel')!;
    expect(strict).toMatchObject({ ok: false, kind: 'input_mismatch', eventId: Number(first.eventId), inputMismatch: { call: 1, field } });
    expect(strict.ok === false && strict.explanation).toMatch(why);
  });
});
