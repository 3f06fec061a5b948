import { FakeAnthropicServer, say, type FakeAnthropicOptions, type RecordedRequest } from '@fabric-harness/sdk/testing';

/** The title a session's small-model title request gets from {@link startSessionFake}. */
export const SCRIPTED_TITLE = 'Garden Trip Planning';

/** A session's title request (its own small-model call, concurrent with the first turn). */
export function isTitleRequest(req: RecordedRequest): boolean {
  return req.path === '/v1/messages' && typeof req.body?.system === 'string' && /title/i.test(req.body.system);
}

/**
 * A fake Anthropic server for sessions: title requests are answered by a route (they race the first
 * turn for the script otherwise); everything else comes from the script.
 */
export function startSessionFake(options: FakeAnthropicOptions = {}): Promise<FakeAnthropicServer> {
  return FakeAnthropicServer.start({ ...options, route: (req) => (isTitleRequest(req) ? say(SCRIPTED_TITLE) : options.route?.(req)) });
}

/** The text of the last user message of a model request. */
export function lastUserText(req: RecordedRequest): string {
  const msgs = req.body.messages as Array<{ role: string; content: Array<{ type: string; text?: string }> }>;
  const user = [...msgs].reverse().find((m) => m.role === 'user')!;
  return user.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}
