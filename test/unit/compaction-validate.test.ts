import { validateApiMessages } from '../../src/core/context/compaction/validate';
import { toApiMessages } from '../../src/core/entries';
import { call, results, say, session, summary, user } from './compaction-helpers';

describe('validateApiMessages', () => {
  it('accepts a valid history', () => {
    expect(validateApiMessages(toApiMessages([summary(), ...session(3)]))).toEqual([]);
  });

  it('reports structural problems', () => {
    expect(validateApiMessages([])).toEqual(['no messages']);
    expect(validateApiMessages(toApiMessages([say('hi')]))).toContain('first message is not from the user');
    expect(validateApiMessages(toApiMessages([user('a'), call([['1', 'read_file', {}]]), user('b')])).join('\n')).toMatch(/tool_use 1 is not answered/);
    expect(validateApiMessages(toApiMessages([user('a'), results([['9', 'x']])])).join('\n')).toMatch(/tool_result 9 answers no tool_use/);
    const dup = [user('a'), call([['1', 'x', {}]]), results([['1', '']]), call([['1', 'x', {}]]), results([['1', '']])];
    expect(validateApiMessages(toApiMessages(dup)).join('\n')).toMatch(/duplicate tool_use id 1/);
    expect(
      validateApiMessages([
        { role: 'user', content: [{ type: 'text', text: 'a' }] },
        { role: 'user', content: [{ type: 'text', text: 'b' }] },
      ]),
    ).toEqual(['message 1: two user messages in a row']);
  });
});
