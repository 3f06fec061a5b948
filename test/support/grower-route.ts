import { callTools, say, type RecordedRequest } from '@fabric-harness/sdk/testing';

/**
 * The fake model's answers for the grower agents (test/fixtures/agents.ts): reads `[model calls: N]` from
 * the first message; calls `grow` with the next step while the request holds fewer than N-1 tool
 * results, then says done. So a run makes exactly N model calls.
 */
export function growerRoute(req: RecordedRequest) {
  const messages: Array<{ content?: unknown }> = req.body?.messages ?? [];
  const marker = /\[model calls: (\d+)\]/.exec(JSON.stringify(messages[0]?.content ?? ''));
  if (!marker) return undefined;
  let results = 0;
  for (const m of messages) {
    if (Array.isArray(m.content)) results += m.content.filter((b: { type?: unknown } | null) => b?.type === 'tool_result').length;
  }
  return results < Number(marker[1]) - 1 ? callTools({ name: 'grow', input: { step: results + 1 } }) : say('done');
}
