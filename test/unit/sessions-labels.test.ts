/** Session labels: names with optional typed values, the CLI form, and the FhLabels keyword list. */
import {
  InvalidLabelError,
  labelKeywords,
  labelsFromKeywords,
  parseLabel,
  parseLabelArg,
  withLabel,
  withoutLabel,
  type Labels,
} from '../../src/core/sessions';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('parseLabel', () => {
  it('takes a name and an optional string, number or boolean value', () => {
    expect(parseLabel('urgent')).toEqual({ name: 'urgent', value: null });
    expect(parseLabel('urgent', null)).toEqual({ name: 'urgent', value: null });
    expect(parseLabel('priority', 2)).toEqual({ name: 'priority', value: 2 });
    expect(parseLabel('ratio', -0.25)).toEqual({ name: 'ratio', value: -0.25 });
    expect(parseLabel('done', false)).toEqual({ name: 'done', value: false });
    expect(parseLabel('area', 'billing')).toEqual({ name: 'area', value: 'billing' });
    expect(parseLabel('Team.Sub_area-2', 'x'.repeat(200))).toEqual({ name: 'Team.Sub_area-2', value: 'x'.repeat(200) });
    expect(parseLabel('a'.repeat(64)).name).toHaveLength(64);
  });

  it.each([
    ['empty', ''],
    ['leading hyphen', '-x'],
    ['leading dot', '.x'],
    ['space', 'a b'],
    ['equals sign', 'a=b'],
    ['comma', 'a,b'],
    ['65 characters', 'a'.repeat(65)],
    ['a number', 42],
    ['undefined', undefined],
  ])('refuses a name that is %s (INVALID_LABEL, field label)', (_what, name) => {
    const error = thrown(() => parseLabel(name));
    expect(error).toBeInstanceOf(InvalidLabelError);
    expect(error).toMatchObject({ code: 'INVALID_LABEL', field: 'label' });
  });

  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['an object', { a: 1 }],
    ['an array', ['a']],
    ['an empty string', ''],
    ['201 characters', 'x'.repeat(201)],
    ['a newline', 'two\nlines'],
    ['a carriage return', 'two\rlines'],
    ['a bigint', 1n],
  ])('refuses a value that is %s (INVALID_LABEL, field label.value)', (_what, value) => {
    const error = thrown(() => parseLabel('area', value));
    expect(error).toBeInstanceOf(InvalidLabelError);
    expect(error).toMatchObject({ code: 'INVALID_LABEL', field: 'label.value', label: 'area' });
    expect((error as Error).message).toContain("'area'");
  });
});

describe('parseLabelArg', () => {
  it.each([
    ['urgent', { name: 'urgent', value: null }],
    ['priority=2', { name: 'priority', value: 2 }],
    ['priority=-1.5', { name: 'priority', value: -1.5 }],
    ['big=1e3', { name: 'big', value: 1000 }],
    ['done=true', { name: 'done', value: true }],
    ['done=false', { name: 'done', value: false }],
    ['area=billing', { name: 'area', value: 'billing' }],
    ['note=a=b', { name: 'note', value: 'a=b' }],
    ['version=1.2.3', { name: 'version', value: '1.2.3' }],
    ['hex=0x10', { name: 'hex', value: '0x10' }],
    ['zip=007', { name: 'zip', value: '007' }],
    ['flag=TRUE', { name: 'flag', value: 'TRUE' }],
    ['space=two words', { name: 'space', value: 'two words' }],
  ])('%s', (arg, label) => {
    expect(parseLabelArg(arg)).toEqual(label);
  });

  it.each([
    ['x=', 'label.value'],
    ['=x', 'label'],
    ['', 'label'],
    ['bad name=1', 'label'],
  ])('refuses %j (field %s)', (arg, field) => {
    expect(thrown(() => parseLabelArg(arg))).toMatchObject({ code: 'INVALID_LABEL', field });
  });
});

describe('label keywords (FhLabels)', () => {
  const labels: Labels = { urgent: null, priority: 2, area: 'billing', done: true, ratio: 0.5, 'team.x': 'a=b', muted: false, level: 0 };

  it('lists each label by name, and valued ones also as name=value, sorted', () => {
    expect(labelKeywords(labels)).toEqual([
      'area',
      'area=billing',
      'done',
      'done=true',
      'level',
      'level=0',
      'muted',
      'muted=false',
      'priority',
      'priority=2',
      'ratio',
      'ratio=0.5',
      'team.x',
      'team.x=a=b',
      'urgent',
    ]);
    expect(labelKeywords({})).toEqual([]);
  });

  it('reads back to the same labels, in any keyword order', () => {
    const keywords = labelKeywords(labels);
    expect(labelsFromKeywords(keywords)).toEqual(labels);
    expect(labelsFromKeywords([...keywords].reverse())).toEqual(labels);
    expect(labelsFromKeywords(labelKeywords({ constructor: null, toString: 1 }))).toEqual({ constructor: null, toString: 1 });
  });

  it('round-trips CLI arguments through keywords', () => {
    const args = ['urgent', 'priority=2', 'done=true', 'area=billing'];
    const parsed = args.reduce<Labels>((all, arg) => withLabel(all, parseLabelArg(arg)), {});
    expect(labelsFromKeywords(labelKeywords(parsed))).toEqual(parsed);
    expect(parsed).toEqual({ urgent: null, priority: 2, done: true, area: 'billing' });
  });

  it('types values back as text reads (a string that looks like a number comes back a number)', () => {
    expect(labelsFromKeywords(labelKeywords({ code: '42', yes: 'true' }))).toEqual({ code: 42, yes: true });
  });

  it('refuses to list an invalid label, and skips keywords that are not labels when reading', () => {
    expect(() => labelKeywords({ 'bad name': null })).toThrow(expect.objectContaining({ code: 'INVALID_LABEL', field: 'label' }));
    expect(() => labelKeywords({ area: '' })).toThrow(expect.objectContaining({ code: 'INVALID_LABEL', field: 'label.value' }));
    expect(labelsFromKeywords(['', '=x', 'ok', 'bad name=1', 42 as unknown as string])).toEqual({ ok: null });
  });
});

describe('withLabel / withoutLabel', () => {
  it('return new objects and validate the label', () => {
    const before: Labels = { urgent: null };
    const after = withLabel(before, { name: 'priority', value: 1 });
    expect(after).toEqual({ urgent: null, priority: 1 });
    expect(before).toEqual({ urgent: null });
    expect(withLabel(after, { name: 'priority', value: 3 })).toEqual({ urgent: null, priority: 3 });
    expect(withoutLabel(after, 'urgent')).toEqual({ priority: 1 });
    expect(withoutLabel(after, 'absent')).toEqual(after);
    expect(after).toEqual({ urgent: null, priority: 1 });
    expect(() => withLabel(before, { name: 'x', value: NaN })).toThrow(InvalidLabelError);
  });
});
