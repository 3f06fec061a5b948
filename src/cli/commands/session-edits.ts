/** `fh session` edits of one session: interrupt, reset, status, title, label, archive, unarchive, end. */
import type { SessionInfo } from '../../wire/session-messages';
import type { SessionHandle } from '../../client/sessions';
import { parseLabelArg } from '../../core/sessions/labels';
import { flag, strs, type Parsed } from '../args';
import { usage } from '../errors';
import type { Command, Io } from '../context';
import { labelsText } from '../session-text';
import { args, handleOf, out, sub, withClient } from '../session-command-kit';

export const interruptCommand = sub('interrupt', {
  summary: "cancel a session's running turn (model call, tools, approval wait)",
  usage: 'interrupt <id>',
  examples: ['fh session interrupt triage-7'],
  run: async (p, io) => {
    const { named } = args(p, 'session interrupt', ['id']);
    return withClient(p, async (conn) => {
      const r = await handleOf(conn, named[0]!).interrupt();
      return out(io, p, { id: named[0], ...r }, r.interrupted ? `interrupted the turn answering ${r.messageId ?? 'the current message'}` : 'nothing to interrupt: no turn is running');
    });
  },
});

// Same session id, same workflow: the overflow ladder resets mid-turn inside the workflow the same way,
// and clients (a chat window, `fh session prompt`) keep addressing the session they know.
export const resetCommand = sub('reset', {
  summary: "restart a session's conversation from a transfer summary and the agent's memory (same id; the old transcript stays stored)",
  usage: 'reset <id> [--no-summary]',
  options: { 'no-summary': { type: 'boolean', help: 'start empty (memory only), without the transfer summary call' } },
  examples: ['fh session reset triage-7'],
  run: async (p, io) => {
    const { named } = args(p, 'session reset', ['id']);
    return withClient(p, async (conn) => {
      const r = await handleOf(conn, named[0]!).reset({ transferSummary: !flag(p, 'no-summary') });
      return out(io, p, { id: named[0], ...r }, `reset ${named[0]}: ${r.entriesBefore} entries replaced by a transfer summary${r.summary ? `:\n${r.summary}` : ' (none)'}`);
    });
  },
});

export const statusCommand = sub('status', {
  summary: "set a session's status (todo, in-progress, needs-review, done, cancelled, or the agent's own)",
  usage: 'status <id> <status>',
  description: 'A status set by hand stops the automatic transitions; done and cancelled are never reopened automatically.',
  examples: ['fh session status triage-7 done', 'fh session status triage-7 blocked --json'],
  run: async (p, io) => {
    const { named } = args(p, 'session status', ['id', 'status']);
    return edited(p, io, named[0]!, (s) => s.setStatus(named[1]!), (i) => `${i.id}: status ${i.status}`);
  },
});

export const titleCommand = sub('title', {
  summary: 'rename a session',
  usage: 'title <id> <title…>',
  examples: ['fh session title triage-7 Billing export bug'],
  run: async (p, io) => {
    const { named, rest } = args(p, 'session title', ['id'], { rest: 'title', restRequired: true });
    return edited(p, io, named[0]!, (s) => s.setTitle(rest.join(' ')), (i) => `${i.id}: title ${i.title ?? '-'}`);
  },
});

export const labelCommand = sub('label', {
  summary: 'add, change or remove labels of a session',
  usage: 'label <id> [name[=value]…] [--remove <name>]…',
  description: 'Values are typed as written: priority=2 is a number, done=true a boolean, area=billing a string; a bare name is a label without a value.',
  options: { remove: { type: 'string', multiple: true, value: '<name>', help: 'remove this label' } },
  examples: ['fh session label triage-7 urgent priority=2', 'fh session label triage-7 --remove urgent'],
  run: async (p, io) => {
    const { named, rest } = args(p, 'session label', ['id'], { rest: 'name[=value]' });
    const adds = rest.map(parseLabelArg);
    const removes = strs(p, 'remove');
    if (adds.length === 0 && removes.length === 0) throw usage('fh session label needs a label to set (name or name=value) or --remove <name>');
    return edited(
      p,
      io,
      named[0]!,
      async (s) => {
        let info: SessionInfo | undefined;
        for (const l of adds) info = await s.label(l.name, l.value);
        for (const name of removes) info = await s.unlabel(name);
        return info!;
      },
      (i) => `${i.id}: labels ${labelsText(i.labels)}`,
    );
  },
});

export function archiveCommand(archived: boolean): Command {
  const verb = archived ? 'archive' : 'unarchive';
  return sub(verb, {
    summary: archived ? 'archive a session (hidden from `fh session list` unless --archived/--all)' : 'bring an archived session back',
    usage: `${verb} <id>`,
    examples: [`fh session ${verb} triage-7`],
    run: async (p, io) => {
      const { named } = args(p, `session ${verb}`, ['id']);
      return edited(p, io, named[0]!, (s) => (archived ? s.archive() : s.unarchive()), (i) => `${i.id}: ${i.archived ? 'archived' : 'not archived'}`);
    },
  });
}

export const endCommand = sub('end', {
  summary: 'end a session: queued messages are answered SESSION_CLOSED and its workflow completes',
  usage: 'end <id>',
  examples: ['fh session end triage-7'],
  run: async (p, io) => {
    const { named } = args(p, 'session end', ['id']);
    return withClient(p, async (conn) => {
      await handleOf(conn, named[0]!).end();
      return out(io, p, { id: named[0], ended: true }, `${named[0]}: ended`);
    });
  },
});

export async function edited(p: Parsed, io: Io, id: string, edit: (s: SessionHandle) => Promise<SessionInfo>, text: (i: SessionInfo) => string): Promise<number> {
  return withClient(p, async (conn) => {
    const info = await edit(handleOf(conn, id));
    return out(io, p, info, text(info));
  });
}

