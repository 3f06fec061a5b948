/** Permission modes: which tool calls run, wait for approval or are refused; tools declaring readOnly. */
import { implement, schema, tool } from '@fabric-harness/sdk';
import { builtinTools } from '../../src/core/builtin-tools';
import { toolSpec } from '../../src/core/tools';
import { deniedText, permissionFor, permissionForTool, refusedInExploreText, toolEffect } from '../../src/core/sessions';

describe('permissionFor', () => {
  it.each([
    ['explore', 'read', 'run'],
    ['explore', 'write', 'refuse'],
    ['ask', 'read', 'run'],
    ['ask', 'write', 'ask'],
    ['execute', 'read', 'run'],
    ['execute', 'write', 'run'],
  ] as const)('%s + %s → %s', (mode, effect, permission) => {
    expect(permissionFor(mode, effect)).toBe(permission);
  });

  it('asks when the mode is not one it knows (data from outside the types)', () => {
    expect(permissionFor('yolo' as never, 'write')).toBe('ask');
  });
});

describe('toolEffect and readOnly declarations', () => {
  it('built-in read_file reads; write_file, edit_file and bash write', () => {
    expect(toolEffect(builtinTools.read_file)).toBe('read');
    expect(toolEffect(builtinTools.write_file)).toBe('write');
    expect(toolEffect(builtinTools.edit_file)).toBe('write');
    expect(toolEffect(builtinTools.bash)).toBe('write');
    expect(permissionForTool('explore', builtinTools.read_file)).toBe('run');
    expect(permissionForTool('explore', builtinTools.bash)).toBe('refuse');
    expect(permissionForTool('ask', builtinTools.edit_file)).toBe('ask');
  });

  it('a tool is a write unless it says readOnly: true', () => {
    expect(toolEffect({})).toBe('write');
    expect(toolEffect({ readOnly: false })).toBe('write');
    expect(toolEffect({ readOnly: true })).toBe('read');
  });

  it('tool() keeps readOnly, implement() keeps the declaration with it, and the API spec leaves it out', () => {
    const lookup = tool({ name: 'lookup', description: 'Look a word up.', input: schema.object({ word: schema.string() }), readOnly: true });
    expect(lookup.readOnly).toBe(true);
    expect(toolEffect(lookup)).toBe('read');
    expect(implement(lookup, () => 'x').tool.readOnly).toBe(true);
    expect(toolEffect(implement(lookup, () => 'x').tool)).toBe('read');
    const plain = tool({ name: 'plain', description: 'Do a thing.', input: schema.object({}), execute: () => 1 });
    expect(plain.readOnly).toBeUndefined();
    expect(Object.keys(toolSpec(lookup)).sort()).toEqual(['description', 'input_schema', 'name']);
  });

  it('tool() refuses a readOnly that is not a boolean', () => {
    expect(() => tool({ name: 'bad', description: 'x', input: schema.object({}), readOnly: 'yes' as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_TOOL_DEFINITION', message: expect.stringMatching(/readOnly must be a boolean/) }),
    );
  });
});

describe('texts the model gets', () => {
  it('explains an explore-mode refusal, naming the tool', () => {
    const text = refusedInExploreText('write_file');
    expect(text).toContain("'write_file'");
    expect(text).toMatch(/explore mode/);
    expect(text).toMatch(/not run/);
  });

  it('explains a denial, naming the tool, with the user note when there is one', () => {
    expect(deniedText('bash')).toContain("'bash'");
    expect(deniedText('bash')).toMatch(/denied/);
    expect(deniedText('bash')).not.toMatch(/The user said/);
    expect(deniedText('bash', '  use the staging database instead ')).toMatch(/The user said: use the staging database instead$/);
    expect(deniedText('bash', '   ')).toBe(deniedText('bash'));
  });
});
