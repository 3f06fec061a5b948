/**
 * The session's catalogue entry (title, status, labels, flags, timestamps): automatic status
 * transitions, the generated title, auto-archive after idleness, the search attributes that mirror the
 * entry for listing, and the `info` query.
 */
import { namedConnection } from '../../core/connection-name';
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { labelKeywords } from '../../core/sessions/labels';
import { autoTransition } from '../../core/sessions/statuses';
import { fallbackTitle, sanitizeTitle, titleRequest } from '../../core/sessions/titles';
import { sessionSearchAttributeUpdates } from '../../wire/search-attributes';
import type { SessionInfo } from '../../wire/session-messages';
import type { SessionCore } from './core';
import { streamCatalogue } from '../stream/catalogue';

export class Catalogue {
  constructor(private readonly s: SessionCore) {}

  transition(event: 'user-message' | 'turn-done'): void {
    const r = this.s.record;
    r.status = autoTransition({ status: r.status, manual: r.statusManual }, event).status;
  }

  async generateTitle(firstMessage: string): Promise<void> {
    const s = this.s;
    let title: string;
    try {
      const model = s.titleModel();
      if (!model) throw new Error('no title model');
      const req = titleRequest(firstMessage);
      // On the session's own connection (named only when not the default: the input is what it was before).
      const connection = namedConnection(s.record.settings.connection);
      const res = await s.acts.fhSummarize({ model, system: req.system, userText: req.userText, maxTokens: req.maxTokens, ...(connection ? { connection } : {}) });
      title = sanitizeTitle(res.text) || fallbackTitle(firstMessage);
    } catch {
      title = fallbackTitle(firstMessage); // a title is a nicety: never fail the session for it
    }
    if (s.record.titleSource === 'user') return; // the user named it meanwhile
    s.record.title = title;
    s.record.titleSource = 'generated';
    this.upsert();
  }

  idleRemainingMs(): number | undefined {
    const after = this.s.start.autoArchiveAfterMs;
    const r = this.s.record;
    if (after === undefined || r.archived || r.flagged) return undefined;
    const since = r.lastMessageAt ?? r.createdAt;
    return Math.max(1, since + after - Date.now());
  }

  /** Idle past the threshold: archive (flagged and processing sessions are exempt). */
  autoArchive(): void {
    const s = this.s;
    if (s.record.archived || s.record.flagged || s.current || s.queue.length > 0) return;
    s.record.archived = true;
    this.upsert();
  }

  /**
   * Mirrors the catalogue entry into search attributes, sending only what changed since the last
   * upsert (each upsert is a history event: sending all of them twice a turn cost ~1 KB per turn).
   */
  upsert(): void {
    streamCatalogue(this.s.record.status, this.s.record.title);
    const changed = this.searchAttributeUpdates().filter((pair) => {
      const value = JSON.stringify(pair.value);
      if (this.s.upserted.get(pair.key.name) === value) return false;
      this.s.upserted.set(pair.key.name, value);
      return true;
    });
    if (changed.length > 0) upsertSearchAttributes(changed);
  }

  private searchAttributeUpdates() {
    const r = this.s.record;
    return sessionSearchAttributeUpdates({
      agent: this.s.agent,
      status: r.status,
      title: r.title,
      labels: labelKeywords(r.labels),
      flagged: r.flagged,
      archived: r.archived,
      model: r.settings.model,
      lastMessageAt: r.lastMessageAt,
    });
  }

  info(): SessionInfo {
    const s = this.s;
    const info = workflowInfo();
    return {
      ...s.record,
      id: info.workflowId,
      runId: info.runId,
      processing: s.current !== undefined,
      restoring: s.restoring,
      current: s.current?.message.id,
      queued: [...s.queue],
      pendingApprovals: [...s.approvals.values()].filter((a) => !a.decision).map(({ decision: _d, ...a }) => a),
      closed: s.closed,
      ...(s.failure ? { failure: { ...s.failure } } : {}),
      historyLength: info.historyLength,
    };
  }
}
