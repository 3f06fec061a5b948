/** Per-session settings: defaults, validated patches naming the field, the connection lock, thinking budgets. */
import { InvalidInputError } from '../../src/core/errors';
import {
  ConnectionLockedError,
  applySettingsPatch,
  defaultSessionSettings,
  sessionSettingsPatchSchema,
  thinkingBudgetTokens,
  type SessionSettings,
} from '../../src/core/sessions';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('defaultSessionSettings', () => {
  it('is anthropic, thinking off, execute, with no model or directory keys', () => {
    const settings = defaultSessionSettings();
    expect(settings).toEqual({ connection: 'anthropic', thinking: 'off', permissionMode: 'execute' });
    expect(Object.keys(settings).sort()).toEqual(['connection', 'permissionMode', 'thinking']);
    settings.thinking = 'max';
    expect(defaultSessionSettings().thinking).toBe('off');
  });

  it('takes a validated partial over the defaults', () => {
    expect(defaultSessionSettings({ model: 'claude-sonnet-4-5', permissionMode: 'ask', workingDirectory: '/repo' })).toEqual({
      model: 'claude-sonnet-4-5',
      connection: 'anthropic',
      thinking: 'off',
      permissionMode: 'ask',
      workingDirectory: '/repo',
    });
    expect(Object.keys(defaultSessionSettings({ model: undefined }))).not.toContain('model');
    expect(thrown(() => defaultSessionSettings({ thinking: 'lots' } as never))).toMatchObject({ code: 'INVALID_INPUT', field: 'settings.thinking' });
  });
});

describe('applySettingsPatch', () => {
  const current: SessionSettings = { model: 'claude-haiku-4-5', connection: 'anthropic', thinking: 'off', permissionMode: 'execute' };

  it('changes model, thinking, permission mode and working directory, before and after the first message', () => {
    for (const started of [false, true]) {
      const next = applySettingsPatch(current, { model: 'claude-opus-4-1', thinking: 'high', permissionMode: 'explore', workingDirectory: 'sub/dir' }, { started });
      expect(next).toEqual({ model: 'claude-opus-4-1', connection: 'anthropic', thinking: 'high', permissionMode: 'explore', workingDirectory: 'sub/dir' });
    }
    expect(current).toEqual({ model: 'claude-haiku-4-5', connection: 'anthropic', thinking: 'off', permissionMode: 'execute' });
    expect(applySettingsPatch(current, {}, { started: true })).toEqual(current);
  });

  it('changes the connection before the first message only', () => {
    expect(applySettingsPatch(current, { connection: 'azure' }, { started: false }).connection).toBe('azure');
    const error = thrown(() => applySettingsPatch(current, { connection: 'azure', model: 'x' }, { started: true }));
    expect(error).toBeInstanceOf(ConnectionLockedError);
    expect(error).toMatchObject({ code: 'CONNECTION_LOCKED', current: 'anthropic', requested: 'azure' });
    expect((error as Error).message).toMatch(/^settings\.connection: .*locked after its first message.*'anthropic'.*'azure'/);
    // Naming the connection it already has is not a change.
    expect(applySettingsPatch(current, { connection: 'anthropic', model: 'x' }, { started: true }).model).toBe('x');
  });

  it.each([
    [{ permissionMode: 'yolo' }, 'settings.permissionMode'],
    [{ thinking: 'extreme' }, 'settings.thinking'],
    [{ thinking: 3 }, 'settings.thinking'],
    [{ model: '' }, 'settings.model'],
    [{ model: 3 }, 'settings.model'],
    [{ connection: 'not a name' }, 'settings.connection'],
    [{ workingDirectory: '' }, 'settings.workingDirectory'],
    [{ workingDirectory: 'a\0b' }, 'settings.workingDirectory'],
    [{ colour: 'red' }, 'settings.colour'],
    [null, 'settings'],
    ['execute', 'settings'],
    [undefined, 'settings'],
  ])('refuses %j with INVALID_INPUT naming %s', (patch, field) => {
    const error = thrown(() => applySettingsPatch(current, patch, { started: false }));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'INVALID_INPUT', field });
  });

  it('validates before the lock (a bad connection is INVALID_INPUT even once started)', () => {
    expect(thrown(() => applySettingsPatch(current, { connection: '' }, { started: true }))).toMatchObject({ code: 'INVALID_INPUT', field: 'settings.connection' });
  });

  it('exposes the strict patch schema', () => {
    expect(sessionSettingsPatchSchema.safeParse({ thinking: 'low' }).success).toBe(true);
    expect(sessionSettingsPatchSchema.safeParse({ other: 1 }).success).toBe(false);
  });
});

describe('thinkingBudgetTokens', () => {
  it.each([
    ['off', undefined],
    ['low', 2048],
    ['medium', 8192],
    ['high', 16384],
    ['max', 32000],
  ] as const)('%s → %p', (level, budget) => {
    expect(thinkingBudgetTokens(level)).toBe(budget);
  });
});
