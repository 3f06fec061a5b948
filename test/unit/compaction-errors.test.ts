import { ContextWindowExceededError, InvalidCompactionSettingsError } from '../../src/core/context/compaction/errors';

describe('compaction errors', () => {
  it('ContextWindowExceededError lists its suggestions', () => {
    const e = new ContextWindowExceededError({ contextWindowTokens: 200_000, estimatedTokens: 250_000 });
    expect(e.code).toBe('CONTEXT_WINDOW_EXCEEDED');
    expect(e.name).toBe('ContextWindowExceededError');
    expect(e.estimatedTokens).toBe(250_000);
    expect(e.contextWindowTokens).toBe(200_000);
    expect(e.suggestions).toHaveLength(4);
    for (const s of e.suggestions) expect(e.message).toContain(s);
    expect(e.message).toMatch(/larger context window/);
    expect(e.message).toMatch(/keepRecentEntries/);
    expect(e.message).toMatch(/compact manually/);
    expect(e.message).toMatch(/new session/);
  });

  it('InvalidCompactionSettingsError names the field', () => {
    const e = new InvalidCompactionSettingsError('reserveTokens', 'must be below the window');
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe('INVALID_COMPACTION_SETTINGS');
    expect(e.field).toBe('reserveTokens');
    expect(e.message).toBe('Invalid compaction setting "reserveTokens": must be below the window');
  });
});
