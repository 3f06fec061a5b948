import * as def from '@fabric-harness/sdk';
import * as strict from '@fabric-harness/sdk/strict';
import { TEMPORAL_COMPACTION_WARNING } from '../../src/core/harness';

describe('entrypoints', () => {
  it("default import + runtime 'temporal' warns once per process, unless compaction is disabled", async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await expect(def.init({ runtime: 'temporal', compaction: { enabled: false } })).rejects.toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
      expect(warn).not.toHaveBeenCalled();
      await expect(strict.init({ runtime: 'temporal' })).rejects.toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
      expect(warn).not.toHaveBeenCalled();
      await expect(def.init({ runtime: 'temporal' })).rejects.toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
      await expect(def.init({ runtime: 'temporal' })).rejects.toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn).toHaveBeenCalledWith(TEMPORAL_COMPACTION_WARNING);
    } finally {
      warn.mockRestore();
    }
  });

  it('strict agents must declare an input schema; default ones need not', () => {
    // A type error as well: this line does not compile without the directive (npm run typecheck checks it).
    // @ts-expect-error the strict entry's agent() requires `input`
    expect(() => strict.agent({ name: 'no-schema', run: async () => 1 })).toThrow(/requires an input schema/);
    expect(def.agent({ name: 'no-schema', run: async () => 1 }).flavour).toBe('default');
  });

  it("strict: compactionState().settings is undefined until the agent sets them (nothing injected)", async () => {
    const harness = await strict.init({ contextWindowTokens: 10_000 });
    const state = (await harness.session()).compactionState();
    expect(state.settings).toBeUndefined();
    expect(state.enabled).toBe(false);
    const set = (await harness.session({ compaction: { enabled: true } })).compactionState();
    expect(set.settings).toMatchObject({ enabled: true, contextWindowTokens: 10_000 });
    const defaulted = (await (await def.init({ contextWindowTokens: 10_000 })).session()).compactionState();
    expect(defaulted.settings).toMatchObject({ enabled: true, reserveTokens: 4096 });
  });

  it('rejects bad agent names and bad init options with errors naming the field', async () => {
    expect(() => def.agent({ name: 'has space', run: async () => 1 })).toThrow(/agent name/);
    await expect(def.init({ maxTurns: -1 } as any)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'maxTurns' });
    // One validator and one error type for compaction settings, whichever way they come in.
    await expect(def.init({ compaction: { keepRecentEntries: 0 } } as any)).rejects.toMatchObject({ code: 'INVALID_COMPACTION_SETTINGS', field: 'keepRecentEntries' });
    await expect(def.init({ compaction: { colour: 1 } } as any)).rejects.toMatchObject({ code: 'INVALID_COMPACTION_SETTINGS', field: 'colour' });
    await expect(def.init({ tools: ['rm_rf'] } as any)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'tools.0' });
    await expect(def.init({ colour: 'blue' } as any)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('tool() validates its name and that its input is an object schema', () => {
    expect(() => def.tool({ name: 'bad name', description: 'x', input: def.schema.object({}), execute: () => '' })).toThrow(/tool name/);
    const ok = def.tool({ name: 'ok', description: 'x', input: def.schema.object({ a: def.schema.number() }), execute: () => '' });
    expect(ok.kind).toBe('tool');
  });
});
