/**
 * Edits of the catalogue entry and settings, one kind per request: the validator runs the same checks
 * on a copy as the handler applies, so what it accepts never fails; a model switch is resolved first.
 */
import { condition, patched } from '@temporalio/workflow';
import { z } from 'zod';
import { FabricError } from '../../core/errors';
import type { Session } from '../../core/conversation';
import { namedConnection } from '../../core/connection-name';
import { parseLabel } from '../../core/sessions/labels';
import { applySettingsPatch } from '../../core/sessions/settings';
import { setStatus } from '../../core/sessions/statuses';
import { parseTitleInput } from '../../core/sessions/titles';
import { resolveThinking } from '../../core/thinking';
import { parseWith } from '../../core/validate';
import { decodeFailure, encodeFailure } from '../../wire/failures';
import type { SessionEdit, SessionInfo } from '../../wire/session-messages';
import type { Catalogue } from './catalogue';
import type { SessionCore } from './core';

/** A model or connection edit made before the session's conversation opened waits for it (see Edits.edit). */
export const EDIT_AFTER_OPEN_PATCH = 'fh-edit-after-open';

export class Edits {
  constructor(
    private readonly s: SessionCore,
    private readonly catalogue: Catalogue,
  ) {}

  validateEdit(edit: SessionEdit): void {
    if (typeof edit !== 'object' || edit === null) throw new FabricError('INVALID_INPUT', 'edit: expected an object with a kind');
    this.applyEdit(edit, true);
  }

  async edit(edit: SessionEdit): Promise<SessionInfo> {
    const s = this.s;
    // A new model (or connection) is resolved first: an unknown one fails the update and changes nothing.
    const model = this.applyEdit(edit, true);
    // One that arrives before the conversation opened (just after the start) waits for it: applied
    // unchecked, a connection the worker lacks got in. Patched: the wait moves its resolve activity.
    if (model && !s.conversation && patched(EDIT_AFTER_OPEN_PATCH)) {
      await condition(() => s.conversation !== undefined || s.failure !== undefined);
      if (s.failure) throw encodeFailure(new FabricError(s.failure.code, s.failure.message));
    }
    try {
      if (model && s.conversation) await switchModel(s, s.conversation, model.model ?? s.conversation.model, model.connection);
    } catch (err) {
      throw encodeFailure(decodeFailure(err) ?? err);
    }
    this.applyEdit(edit, false);
    s.edits += 1;
    if (model) s.record.settings.model = s.conversation?.model ?? model.model;
    this.catalogue.upsert();
    return this.catalogue.info();
  }

  /**
   * Validates (dryRun) or applies one edit. Validation runs the same checks on a copy, so what the
   * validator accepts the handler applies without failing. Returns a model to switch to.
   */
  private applyEdit(edit: SessionEdit, dryRun: boolean): { model?: string; connection?: string } | undefined {
    const s = this.s;
    const r = dryRun ? structuredCopy(s.record) : s.record;
    switch (edit.kind) {
      case 'status': {
        const next = setStatus({ status: r.status, manual: r.statusManual }, edit.status, s.statuses);
        r.status = next.status;
        r.statusManual = next.manual;
        return undefined;
      }
      case 'title':
        r.title = parseTitleInput(edit.title);
        r.titleSource = 'user';
        return undefined;
      case 'label': {
        const label = parseLabel(edit.name, edit.value ?? undefined);
        r.labels = { ...r.labels, [label.name]: label.value };
        return undefined;
      }
      case 'unlabel': {
        const { [parseLabel(edit.name).name]: _gone, ...rest } = r.labels;
        r.labels = rest;
        return undefined;
      }
      case 'flag':
        r.flagged = parseWith(z.boolean(), edit.flagged, 'flagged');
        return undefined;
      case 'archive':
        r.archived = parseWith(z.boolean(), edit.archived, 'archived');
        return undefined;
      case 'read': {
        const count = s.conversation?.messages().length ?? 0;
        r.readPointer = parseWith(z.number().int().min(-1).max(Math.max(count - 1, -1)).optional(), edit.upTo, 'upTo') ?? count - 1;
        return undefined;
      }
      case 'settings': {
        const before = r.settings.model;
        const connectionBefore = r.settings.connection;
        // A fork starts from its parent's conversation: its connection is as fixed as a started session's.
        r.settings = applySettingsPatch(r.settings, edit.settings, { started: r.messageCount > 0 || r.forkedFrom !== undefined });

        if (!dryRun && r.settings.workingDirectory && s.conversation) s.conversation.changeWorkingDirectory(r.settings.workingDirectory);
        // From the conversation's next prompt on (a running tool loop keeps the thinking it started with).
        if (!dryRun && s.conversation) s.conversation.changeThinking(resolveThinking(r.settings.thinking));
        // A raised budget lets the next call go (a session without budgets never reaches a refusal: no patch).
        if (!dryRun && s.conversation) s.conversation.costs.setBudget(r.settings.budget);
        // Before the first message the connection may change: the model is resolved again on the new one.
        const connection = r.settings.connection !== connectionBefore ? { connection: r.settings.connection } : {};
        const model = r.settings.model !== before && r.settings.model !== undefined ? { model: r.settings.model } : {};
        return connection.connection !== undefined || model.model !== undefined ? { ...model, ...connection } : undefined;
      }
      case 'clear':
        if (s.current) throw new FabricError('SESSION_BUSY', 'clear: a turn is running; interrupt it first');
        if (!dryRun) s.conversation?.clear();
        r.readPointer = -1;
        return undefined;
      default:
        throw new FabricError('INVALID_INPUT', `edit.kind: unknown kind ${JSON.stringify((edit as { kind?: unknown }).kind)}`);
    }
  }
}

/**
 * Switches the conversation's model, resolved (and verified) by an activity first; with `connection`, on
 * that connection (allowed only before the first message), which a worker without it refuses
 * (UNKNOWN_CONNECTION naming its own) before anything changes.
 */
export async function switchModel(s: SessionCore, session: Session, model: string, connection?: string): Promise<void> {
  const harness = s.harness();
  const given = harness?.options.contextWindowTokens;
  const on = namedConnection(connection ?? harness?.connectionOf(session));
  const input = { model, ...(given !== undefined ? { contextWindowTokens: given } : {}), verify: true, ...(on !== undefined ? { connection: on } : {}) };
  const resolved = await s.acts.fhResolveModel(input);
  if (connection !== undefined) harness?.changeConnection(session, connection);
  session.changeModel(resolved.model, given ?? resolved.contextWindowTokens);
}

function structuredCopy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}
