/** Quitting the chat with messages still being answered says how many, in words, and where to read the answers. */
import { leftWaitingLine } from '../../src/cli/chat/extras';

it('counts the messages left with their noun, and names the session to show', () => {
  expect(leftWaitingLine(1, 's-1')).toBe('(left 1 message being answered; `fh session show s-1` shows them)\n');
  expect(leftWaitingLine(3, 's-1')).toBe('(left 3 messages being answered; `fh session show s-1` shows them)\n');
});
