import { COMPACTION_DEFAULTS, compactionSettingsSchema, resolveCompactionSettings } from '../../src/core/context/settings';
import { InvalidCompactionSettingsError } from '../../src/core/context/compaction/errors';
import { FabricError } from '../../src/core/errors';

const W = 200_000;

function errorOf(fn: () => unknown): InvalidCompactionSettingsError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidCompactionSettingsError);
    return e as InvalidCompactionSettingsError;
  }
  throw new Error('expected a throw');
}

describe('resolveCompactionSettings', () => {
  it('applies defaults and derives compactAtTokens from the window', () => {
    expect(resolveCompactionSettings(undefined, undefined, W, { enabled: true })).toEqual({
      enabled: true,
      compactAtTokens: W - 4096,
      reserveTokens: 4096,
      keepRecentEntries: 20,
      recoverFromOverflow: true,
      contextWindowTokens: W,
    });
    expect(COMPACTION_DEFAULTS).toEqual({ reserveTokens: 4096, keepRecentEntries: 20, recoverFromOverflow: true });
    expect(resolveCompactionSettings(undefined, undefined, W, { enabled: false }).enabled).toBe(false);
  });

  it('uses session settings, and per-prompt values win', () => {
    const session = { enabled: true, reserveTokens: 8192, keepRecentEntries: 30, recoverFromOverflow: true };
    const r = resolveCompactionSettings(session, undefined, W, { enabled: false });
    expect(r).toMatchObject({ enabled: true, reserveTokens: 8192, keepRecentEntries: 30, compactAtTokens: W - 8192 });
    const p = resolveCompactionSettings(
      session,
      { reserveTokens: 1000, compactionKeepRecentEntries: 5, recoverContextOverflow: false, compactAtTokens: 150_000 },
      W,
      { enabled: false },
    );
    expect(p).toMatchObject({ reserveTokens: 1000, keepRecentEntries: 5, recoverFromOverflow: false, compactAtTokens: 150_000 });
  });

  it('an explicit compactAtTokens beats the derived one', () => {
    expect(resolveCompactionSettings({ compactAtTokens: 1000, reserveTokens: 9000 }, undefined, W, { enabled: true }).compactAtTokens).toBe(1000);
  });

  it('shrinks the default reserve only when it would not fit the window', () => {
    expect(resolveCompactionSettings(undefined, undefined, 2000, { enabled: true })).toMatchObject({ reserveTokens: 500, compactAtTokens: 1500 });
    expect(resolveCompactionSettings(undefined, undefined, 8000, { enabled: true })).toMatchObject({ reserveTokens: 4096, compactAtTokens: 3904 });
  });

  it('rejects invalid values with a typed error naming the field', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => resolveCompactionSettings({ reserveTokens: -1 }, undefined, W, { enabled: true }), 'reserveTokens'],
      [() => resolveCompactionSettings({ compactAtTokens: -5 }, undefined, W, { enabled: true }), 'compactAtTokens'],
      [() => resolveCompactionSettings({ compactAtTokens: 0 }, undefined, W, { enabled: true }), 'compactAtTokens'],
      [() => resolveCompactionSettings({ keepRecentEntries: 0 }, undefined, W, { enabled: true }), 'keepRecentEntries'],
      [() => resolveCompactionSettings(undefined, { compactionKeepRecentEntries: 0 }, W, { enabled: true }), 'compactionKeepRecentEntries'],
      [() => resolveCompactionSettings({ compactAtTokens: W + 1 }, undefined, W, { enabled: true }), 'compactAtTokens'],
      [() => resolveCompactionSettings(undefined, { compactAtTokens: W + 1 }, W, { enabled: true }), 'compactAtTokens'],
      [() => resolveCompactionSettings({ reserveTokens: W }, undefined, W, { enabled: true }), 'reserveTokens'],
      [() => resolveCompactionSettings({ keepRecentEntries: 1.5 }, undefined, W, { enabled: true }), 'keepRecentEntries'],
      [() => resolveCompactionSettings({ bogus: 1 } as never, undefined, W, { enabled: true }), 'bogus'],
      [() => resolveCompactionSettings(undefined, undefined, 0, { enabled: true }), 'contextWindowTokens'],
    ];
    for (const [fn, field] of cases) {
      const e = errorOf(fn);
      expect(e.code).toBe('INVALID_COMPACTION_SETTINGS');
      expect(e.field).toBe(field);
      expect(e.message).toContain(field);
      expect(e).toBeInstanceOf(FabricError);
    }
  });

  it('the schema is strict', () => {
    expect(compactionSettingsSchema.safeParse({ enabled: true, extra: 1 }).success).toBe(false);
    expect(compactionSettingsSchema.safeParse({}).success).toBe(true);
  });
});
