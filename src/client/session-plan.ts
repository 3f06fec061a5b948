/**
 * How a session is started: its workflow type and start options (the start envelope, memo and search
 * attributes), computed before any call. startSession, sendPrompt, fork and the web chat handler start with it.
 */
import { parseAgentInput, type AgentDefinition } from '../core/agent';
import { InvalidInputError } from '../core/errors';
import { labelKeywords, parseLabel, type Labels } from '../core/sessions/labels';
import { applySettingsPatch, defaultSessionSettings, type SessionSettingsPatch } from '../core/sessions/settings';
import { parseTitleInput } from '../core/sessions/titles';
import { parseWith } from '../core/validate';
import { z } from 'zod';
import { FH_KIND, SESSION_KIND, sessionSearchAttributes } from '../wire/search-attributes';
import type { CarriedSession, ForkPoint, SessionEnvelope, SessionStart } from '../wire/session-messages';
import { AGENT_MEMO_KEY, DEFAULT_TASK_QUEUE } from './start';
import type { StartSessionOptions } from './session-options';

/** The memo mark of a session started with isolation 'worktree': delete() ends it first, so its worker removes the worktree. */
export const WORKTREE_MEMO_KEY = 'fhWorktree';

/** The settings a session starts with: `settings`, with `connection` and `model` given beside it (the same field twice must agree). */
function startSettings(options: StartSessionOptions): SessionSettingsPatch | undefined {
  const settings: Record<string, unknown> = { ...(options.settings ?? {}) };
  for (const key of ['connection', 'model'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (settings[key] !== undefined && settings[key] !== value) {
      throw new InvalidInputError('session options', key, [{ path: key, message: `${key} '${value}' and settings.${key} '${String(settings[key])}' differ; give one` }]);
    }
    settings[key] = value;
  }
  return options.settings === undefined && options.connection === undefined && options.model === undefined ? undefined : (settings as SessionSettingsPatch);
}

/** How a session of `agent` is started (its workflow type and start options); sendPrompt and the web chat handler start with it. */
export function sessionStartPlan(agent: AgentDefinition | string, options: StartSessionOptions, carried: CarriedSession | undefined) {
  const name = typeof agent === 'string' ? agent : agent.name;
  const input = typeof agent === 'string' || options.input === undefined && !agent.input ? options.input : parseAgentInput(agent, options.input);
  const given = startSettings(options);
  // The connection's name is checked here; whether the worker has it, by the worker (UNKNOWN_CONNECTION naming its own).
  const settings = applySettingsPatch(defaultSessionSettings(), given ?? {}, { started: false });
  const labels: Labels = {};
  for (const [n, v] of Object.entries(options.labels ?? {})) {
    const l = parseLabel(n, v ?? undefined);
    labels[l.name] = l.value;
  }
  const title = options.title !== undefined ? parseTitleInput(options.title) : undefined;
  const historyLimit = parseWith(z.number().int().min(20).optional(), options.historyLimit, 'historyLimit');
  const autoArchiveAfterMs = parseWith(z.number().int().positive().optional(), options.autoArchiveAfterMs, 'autoArchiveAfterMs');
  const start: SessionStart = {
    ...(input !== undefined ? { input } : {}),
    ...(title !== undefined ? { title } : {}),
    ...(given ? { settings: given } : {}),
    ...(Object.keys(labels).length ? { labels } : {}),
    ...(historyLimit !== undefined ? { historyLimit } : {}),
    ...(autoArchiveAfterMs !== undefined ? { autoArchiveAfterMs } : {}),
    ...(carried ? { carried } : {}),
    ...(parseWith(z.boolean().optional(), options.streaming, 'streaming') === false ? { streaming: false } : {}),
    ...(parseWith(z.literal('worktree').optional(), options.isolation, 'isolation') ? { isolation: 'worktree' as const } : {}),
  };
  const envelope: SessionEnvelope = { fhSession: start };
  const record = carried?.record;
  const searchAttributes = [
    { key: FH_KIND, value: SESSION_KIND },
    ...sessionSearchAttributes({
      agent: name,
      status: record?.status ?? 'todo',
      title: record?.title ?? title,
      labels: labelKeywords(record?.labels ?? labels),
      flagged: record?.flagged ?? false,
      archived: false,
      model: record?.settings.model ?? settings.model,
      lastMessageAt: record?.lastMessageAt,
    }),
  ];
  return {
    agent: name,
    options: {
      taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
      ...options.workflow,
      args: [envelope],
      memo: { [AGENT_MEMO_KEY]: name, ...(start.isolation ? { [WORKTREE_MEMO_KEY]: true } : {}), ...options.workflow?.memo },
      typedSearchAttributes: searchAttributes,
    },
  };
}

/**
 * What a fork carries into its new session: the parent's conversation up to `atMessage` and its
 * catalogue entry, as a new session's (its own creation time and message count; the fork's own worktree,
 * if asked for, is made by its first run, the parent's is not the fork's).
 */
export function forkedSession(point: ForkPoint, parentId: string, atMessage: number, title: string | undefined): CarriedSession {
  const now = Date.now();
  const record = {
    ...point.record,
    status: 'todo',
    statusManual: false,
    archived: false,
    readPointer: -1,
    continuedRuns: 0,
    createdAt: now,
    lastUsedAt: now,
    lastMessageAt: undefined,
    messageCount: 0,
    forkedFrom: { sessionId: parentId, atMessage },
    worktree: undefined,
  };
  if (title !== undefined) {
    record.title = parseTitleInput(title);
    record.titleSource = 'user';
  }
  return { record, transcript: point.transcript, queue: [], approvals: [], replies: [], interruptedHint: false };
}
