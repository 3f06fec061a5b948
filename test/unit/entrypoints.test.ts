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
    expect(() => strict.agent({ name: 'no-schema', run: async () => 1 } as any)).toThrow(/requires an input schema/);
    expect(def.agent({ name: 'no-schema', run: async () => 1 }).flavour).toBe('default');
  });

  it('rejects bad agent names and bad init options with errors naming the field', async () => {
    expect(() => def.agent({ name: 'has space', run: async () => 1 })).toThrow(/agent name/);
    await expect(def.init({ maxTurns: -1 } as any)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'maxTurns' });
    await expect(def.init({ compaction: { keepRecentEntries: 0 } } as any)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'compaction.keepRecentEntries' });
    await expect(def.init({ tools: ['rm_rf'] } as any)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'tools.0' });
    await expect(def.init({ colour: 'blue' } as any)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('tool() validates its name and that its input is an object schema', () => {
    expect(() => def.tool({ name: 'bad name', description: 'x', input: def.schema.object({}), execute: () => '' })).toThrow(/tool name/);
    const ok = def.tool({ name: 'ok', description: 'x', input: def.schema.object({ a: def.schema.number() }), execute: () => '' });
    expect(ok.kind).toBe('tool');
  });
});
