/**
 * Checks a message list against the Messages API's structural rules. Returns problems as text (empty
 * when valid): used by tests and as a guard before sending a compacted history.
 */
import type { ApiMessage } from '../../entries';

export function validateApiMessages(messages: readonly ApiMessage[]): string[] {
  const problems: string[] = [];
  if (messages.length === 0) return ['no messages'];
  if (messages[0]!.role !== 'user') problems.push('first message is not from the user');
  const seenToolUse = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (i > 0 && messages[i - 1]!.role === m.role) problems.push(`message ${i}: two ${m.role} messages in a row`);
    if (m.content.length === 0) problems.push(`message ${i}: empty content`);
    if (m.role === 'assistant') {
      if (m.content.some((b) => b.type === 'tool_result')) problems.push(`message ${i}: tool_result in an assistant message`);
      const ids = m.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
      for (const id of ids) {
        if (seenToolUse.has(id)) problems.push(`message ${i}: duplicate tool_use id ${id}`);
        seenToolUse.add(id);
      }
      const next = messages[i + 1];
      const answered = new Set(next?.role === 'user' ? next.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])) : []);
      for (const id of ids) if (!answered.has(id)) problems.push(`message ${i}: tool_use ${id} is not answered in the next message`);
      continue;
    }
    if (m.content.some((b) => b.type === 'tool_use')) problems.push(`message ${i}: tool_use in a user message`);
    const prev = messages[i - 1];
    const asked = new Set(prev?.role === 'assistant' ? prev.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : []);
    const answered = new Set<string>();
    let sawOther = false;
    for (const b of m.content) {
      if (b.type !== 'tool_result') {
        sawOther = true;
        continue;
      }
      if (sawOther) problems.push(`message ${i}: tool_result ${b.tool_use_id} after non-tool_result content`);
      if (!asked.has(b.tool_use_id)) problems.push(`message ${i}: tool_result ${b.tool_use_id} answers no tool_use of the previous message`);
      if (answered.has(b.tool_use_id)) problems.push(`message ${i}: tool_use ${b.tool_use_id} answered twice`);
      answered.add(b.tool_use_id);
    }
  }
  return problems;
}
