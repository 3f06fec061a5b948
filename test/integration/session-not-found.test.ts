/**
 * A handle on a session id nobody started (getSession makes no call) fails at first use with
 * SESSION_NOT_FOUND, from every public method that reaches the server: updates, queries, the stream and
 * the prompt that streams (which used to throw Temporal's WorkflowNotFoundError).
 */
import { getSession, type SessionHandle } from '@fabric-harness/sdk/client';
import { testConnection, type TestConnection } from '../support/temporal';

/** Each public method, called the way a user would (a stream is iterated). */
const CALLS: Record<string, (s: SessionHandle) => Promise<unknown>> = {
  prompt: (s) => s.prompt('hello?'),
  stream: async (s) => {
    for await (const _ of s.stream()) break;
  },
  approvals: async (s) => {
    for await (const _ of s.approvals()) break;
  },
  promptStream: async (s) => {
    const ps = await s.promptStream('hello?');
    for await (const _ of ps) break;
    return ps.reply;
  },
  send: (s) => s.send('hello?'),
  reply: (s) => s.reply('m-1'),
  cancelMessage: (s) => s.cancelMessage('m-1'),
  interrupt: (s) => s.interrupt(),
  approve: (s) => s.approve('call-1'),
  approvePlan: (s) => s.approvePlan('plan-1'),
  declinePlan: (s) => s.declinePlan('plan-1'),
  plans: (s) => s.plans(),
  deny: (s) => s.deny('call-1'),
  pendingApprovals: (s) => s.pendingApprovals(),
  info: (s) => s.info(),
  edit: (s) => s.edit({ kind: 'flag', flagged: true }),
  reset: (s) => s.reset(),
  setStatus: (s) => s.setStatus('done'),
  setTitle: (s) => s.setTitle('t'),
  label: (s) => s.label('area', 'x'),
  unlabel: (s) => s.unlabel('area'),
  flag: (s) => s.flag(),
  archive: (s) => s.archive(),
  unarchive: (s) => s.unarchive(),
  markRead: (s) => s.markRead(),
  updateSettings: (s) => s.updateSettings({ permissionMode: 'ask' }),
  clear: (s) => s.clear(),
  messages: (s) => s.messages(),
  compactionState: (s) => s.compactionState(),
  contextBudget: (s) => s.contextBudget(),
  usage: (s) => s.usage(),
  events: (s) => s.events(),
  fork: (s) => s.fork({ atMessage: 0 }),
  end: (s) => s.end(),
  delete: (s) => s.delete(),
};
/** Methods that make no call of their own (followReply only asks again for a reply that continued) or are private. */
const NO_CALL = ['constructor', 'followReply', 'update', 'endWorktree', 'restored', 'waitGone', 'agent', 'request'];

describe('a session id nobody started', () => {
  let t: TestConnection;
  beforeAll(async () => {
    t = await testConnection();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every public method that reaches the server is listed here', () => {
    const { SessionHandle } = require('@fabric-harness/sdk/client') as typeof import('@fabric-harness/sdk/client');
    const methods = Object.getOwnPropertyNames(SessionHandle.prototype).filter((m) => !NO_CALL.includes(m));
    expect(methods.sort()).toEqual(Object.keys(CALLS).sort());
  });

  it.each(Object.keys(CALLS))('%s fails with SESSION_NOT_FOUND', async (name) => {
    const session = getSession(t.client, `nobody-started-${name.toLowerCase()}-${process.pid}`);
    const err = await CALLS[name]!(session).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'SESSION_NOT_FOUND', sessionId: session.id });
  });
});
