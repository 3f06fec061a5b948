/**
 * listSessions against the real dev server's visibility (SQLite). Session-shaped workflows of a type no worker serves
 * are started with the session search attributes: visibility indexes them at start, no worker is needed, and the
 * listing must never need one (it reads no query, no history). Every query is scoped by a per-run agent name so other
 * suites' workflows on the shared server do not show up.
 */
import { randomBytes } from 'node:crypto';
import { Client, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { InvalidInputError } from '@fabric-harness/sdk';
import {
  listSessions,
  sessionListQuery,
  SearchAttributesMissingError,
  sendPrompt,
  startSession,
  type SessionFilter,
  type SessionSummary,
} from '@fabric-harness/sdk/client';
import { labelKeywords, sessionSearchAttributes, type LabelValue } from '../../src/wire/search-attributes';
import { testConnection, type TestConnection } from '../support/temporal';

const RUN = randomBytes(4).toString('hex');
const AGENT = `vis-agent-${RUN}`;
const OTHER = `vis-other-${RUN}`;
const T = Date.parse('2025-06-01T12:00:00.000Z');
const INJECTED = "needs-review' OR FhStatus = 'todo";

interface Spec {
  id: string;
  agent?: string;
  status: string;
  labels?: Record<string, LabelValue>;
  flagged?: boolean;
  archived?: boolean;
  title?: string;
  lastMessageAt?: number;
}

const SPECS: Spec[] = [
  { id: 'todo', status: 'todo', labels: { urgent: null, priority: 2 }, flagged: true, title: 'Fix the billing bug', lastMessageAt: T - 1000 },
  { id: 'prog', status: 'in-progress', labels: { area: 'billing' }, title: 'Write release notes', lastMessageAt: T - 500 },
  { id: 'review', status: 'needs-review', labels: { priority: 20, billing: null, shipped: true }, title: 'Bug triage', lastMessageAt: T - 2000 },
  { id: 'done', status: 'done', archived: true, title: 'Billing report', lastMessageAt: T - 100 },
  { id: 'inject', status: INJECTED, title: 'quoted status', lastMessageAt: T - 3000 },
  { id: 'nomsg', status: 'todo' },
  { id: 'other', agent: OTHER, status: 'todo', title: 'Fix the billing bug', lastMessageAt: T },
];

const sid = (name: string) => `vis-${RUN}-${name}`;
const ids = (sessions: SessionSummary[]) => sessions.map((s) => s.id.slice(`vis-${RUN}-`.length));

describe('listSessions (Temporal visibility)', () => {
  let t: TestConnection;
  let client: Client;
  const handles: WorkflowHandleWithFirstExecutionRunId[] = [];

  const list = (filter: SessionFilter = {}) => listSessions(client, { agent: AGENT, ...filter });

  beforeAll(async () => {
    t = await testConnection();
    client = t.client;
    const taskQueue = `vis-no-worker-${RUN}`;
    for (const s of SPECS) {
      handles.push(
        await client.workflow.start('VisibilityOnlySession', {
          taskQueue,
          workflowId: sid(s.id),
          typedSearchAttributes: sessionSearchAttributes({
            agent: s.agent ?? AGENT,
            status: s.status,
            ...(s.title ? { title: s.title } : {}),
            labels: labelKeywords(s.labels ?? {}),
            flagged: s.flagged ?? false,
            archived: s.archived ?? false,
            model: 'claude-test',
            ...(s.lastMessageAt !== undefined ? { lastMessageAt: s.lastMessageAt } : {}),
          }),
        }),
      );
    }
    // Not a session: FhAgent and FhStatus but no FhKind. It must never be listed.
    handles.push(
      await client.workflow.start('VisibilityOnlySession', {
        taskQueue,
        workflowId: sid('not-a-session'),
        typedSearchAttributes: [
          { key: defineSearchAttributeKey('FhAgent', SearchAttributeType.KEYWORD), value: AGENT },
          { key: defineSearchAttributeKey('FhStatus', SearchAttributeType.KEYWORD), value: 'todo' },
          { key: defineSearchAttributeKey('FhArchived', SearchAttributeType.BOOL), value: false },
        ],
      }),
    );
    // Visibility is eventually consistent: wait (bounded) until every workflow is indexed, asking visibility directly
    // (not through the code under test).
    const deadline = Date.now() + 30_000;
    for (;;) {
      let n = 0;
      for await (const _ of client.workflow.list({ query: `WorkflowId STARTS_WITH 'vis-${RUN}-'` })) n++;
      if (n === handles.length) break;
      if (Date.now() > deadline) throw new Error(`visibility indexed ${n} of ${handles.length} workflows in 30 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  afterAll(async () => {
    await Promise.all(handles.map((h) => h.terminate('sessions-list test done').catch(() => undefined)));
    await t?.close();
  });

  it('lists the unarchived sessions of an agent, newest message first, decoded from search attributes only', async () => {
    const sessions = await list();
    expect(ids(sessions)).toEqual(['prog', 'todo', 'review', 'inject', 'nomsg']);
    const todo = sessions.find((s) => s.id === sid('todo'))!;
    expect(todo).toEqual({
      id: sid('todo'),
      runId: handles[0]!.firstExecutionRunId,
      agent: AGENT,
      title: 'Fix the billing bug',
      status: 'todo',
      labels: { urgent: null, priority: 2 },
      flagged: true,
      archived: false,
      model: 'claude-test',
      lastMessageAt: new Date(T - 1000),
      startTime: expect.any(Date),
      running: true,
    });
    expect(sessions.find((s) => s.id === sid('review'))!.labels).toEqual({ priority: 20, billing: null, shipped: true });
    const nomsg = sessions.find((s) => s.id === sid('nomsg'))!;
    expect(nomsg.title).toBeUndefined();
    expect(nomsg.lastMessageAt).toBeUndefined();
  });

  it('filters by status: one, or any of several', async () => {
    expect(ids(await list({ status: 'todo' }))).toEqual(['todo', 'nomsg']);
    expect(ids(await list({ status: ['in-progress', 'needs-review'] }))).toEqual(['prog', 'review']);
    expect(await list({ status: 'cancelled' })).toEqual([]);
  });

  it('filters by label name and by label value, all labels required', async () => {
    // Visibility narrows by label (the client re-checks the exact keywords it returns).
    expect(sessionListQuery({ labels: ['urgent', 'priority=2'] })).toContain(`FhLabels = 'urgent' AND FhLabels = 'priority=2'`);
    expect(ids(await list({ labels: ['urgent'] }))).toEqual(['todo']);
    expect(ids(await list({ labels: ['priority'] }))).toEqual(['todo', 'review']);
    expect(ids(await list({ labels: ['priority=2'] }))).toEqual(['todo']);
    expect(ids(await list({ labels: ['priority=20'] }))).toEqual(['review']);
    expect(ids(await list({ labels: ['shipped=true'] }))).toEqual(['review']);
    // `billing` the label is not `area=billing` the value.
    expect(ids(await list({ labels: ['billing'] }))).toEqual(['review']);
    expect(ids(await list({ labels: ['area=billing'] }))).toEqual(['prog']);
    expect(ids(await list({ labels: ['priority', 'urgent'] }))).toEqual(['todo']);
    expect(await list({ labels: ['priority', 'area'] })).toEqual([]);
    // Exact keywords: SQLite visibility alone would match these case-insensitively.
    expect(await list({ labels: ['URGENT'] })).toEqual([]);
  });

  it('filters by flag', async () => {
    expect(ids(await list({ flagged: true }))).toEqual(['todo']);
    expect(ids(await list({ flagged: false }))).toEqual(['prog', 'review', 'inject', 'nomsg']);
  });

  it('hides archived sessions unless asked for them', async () => {
    expect(ids(await list())).not.toContain('done');
    expect(ids(await list({ archived: false }))).not.toContain('done');
    expect(ids(await list({ archived: true }))).toEqual(['done']);
    expect(ids(await list({ includeArchived: true }))).toEqual(['done', 'prog', 'todo', 'review', 'inject', 'nomsg']);
  });

  it('filters by words of the title (all of them, any case)', async () => {
    expect(ids(await list({ titleContains: 'billing' }))).toEqual(['todo']);
    expect(ids(await list({ titleContains: 'billing', includeArchived: true }))).toEqual(['done', 'todo']);
    expect(ids(await list({ titleContains: 'BUG' }))).toEqual(['todo', 'review']);
    expect(ids(await list({ titleContains: 'billing bug' }))).toEqual(['todo']);
    expect(await list({ titleContains: 'billing notes' })).toEqual([]);
  });

  it('filters by agent (the other agent sees only its own)', async () => {
    expect(ids(await listSessions(client, { agent: OTHER }))).toEqual(['other']);
    expect(ids(await list())).not.toContain('other');
  });

  it('filters by last message time and applies the limit to the newest', async () => {
    expect(ids(await list({ lastMessageAfter: new Date(T - 1500) }))).toEqual(['prog', 'todo']);
    expect(ids(await list({ lastMessageBefore: new Date(T - 1500) }))).toEqual(['review', 'inject']);
    expect(ids(await list({ limit: 2 }))).toEqual(['prog', 'todo']);
  });

  it('lists only sessions: a workflow without FhKind = session is never listed, whatever the raw query', async () => {
    expect(ids(await list({ status: 'todo', includeArchived: true }))).not.toContain('not-a-session');
    expect(ids(await list({ query: `WorkflowId = '${sid('not-a-session')}'` }))).toEqual([]);
  });

  it('a status with quotes is a value, never query syntax', async () => {
    // Unescaped, this would read `FhStatus = 'needs-review' OR FhStatus = 'todo'` and list three sessions.
    expect(ids(await list({ status: INJECTED }))).toEqual(['inject']);
    expect(await list({ status: "todo' OR FhKind != 'session" })).toEqual([]);
    expect(await list({ status: 'todo\\' })).toEqual([]);
    expect(await list({ agent: `${AGENT}') OR (FhKind = 'session` })).toEqual([]);
    expect(sessionListQuery({ status: INJECTED })).toContain(`FhStatus = 'needs-review\\' OR FhStatus = \\'todo'`);
    // Labels with quotes cannot go to SQLite visibility as is (its FTS query is built unescaped): matched here.
    expect(await list({ labels: ["it's=a \"b\""] })).toEqual([]);
  });

  it('a raw query is ANDed, and one that could escape the AND is refused', async () => {
    expect(ids(await list({ query: `FhStatus = 'todo' OR FhStatus = 'in-progress'` }))).toEqual(['prog', 'todo', 'nomsg']);
    expect(() => sessionListQuery({ query: "FhStatus = 'todo') OR (FhKind = 'x'" })).toThrow(InvalidInputError);
    expect(() => sessionListQuery({ query: "FhStatus = 'todo" })).toThrow(/unterminated/);
  });

  it('refuses bad filters with InvalidInputError naming the field', async () => {
    const field = (f: unknown) => {
      try {
        sessionListQuery(f as SessionFilter);
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidInputError);
        return (err as InvalidInputError).field;
      }
      throw new Error('expected InvalidInputError');
    };
    expect(field({ status: '' })).toBe('status');
    expect(field({ status: [] })).toBe('status');
    expect(field({ status: ['todo', 'a\nb'] })).toBe('status.1');
    expect(field({ labels: ['=2'] })).toBe('labels.0');
    expect(field({ labels: ['priority='] })).toBe('labels.0');
    expect(field({ agent: 42 })).toBe('agent');
    expect(field({ limit: 0 })).toBe('limit');
    expect(field({ limit: 1.5 })).toBe('limit');
    expect(field({ titleContains: '!!!' })).toBe('titleContains');
    expect(field({ lastMessageBefore: new Date('nope') })).toBe('lastMessageBefore');
    expect(field({ query: '  ' })).toBe('query');
    await expect(listSessions(client, { flagged: 'yes' } as unknown as SessionFilter)).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'flagged' });
  });

  it('a namespace without the search attributes gets SearchAttributesMissingError with the commands to fix it', async () => {
    const namespace = `fh-bare-${RUN}`;
    await t.connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    const bare = new Client({ connection: t.connection, namespace });
    const deadline = Date.now() + 30_000;
    let err: unknown;
    for (;;) {
      err = await listSessions(bare).then(() => undefined, (e: unknown) => e);
      // A namespace just registered may not be known to the frontend yet.
      if (!(err instanceof Error && /namespace .*not found/i.test(`${err.message} ${String(err.cause)}`)) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(err).toBeInstanceOf(SearchAttributesMissingError);
    expect((err as SearchAttributesMissingError).code).toBe('SEARCH_ATTRIBUTES_MISSING');
    expect((err as Error).message).toContain(`temporal operator search-attribute create --namespace ${namespace} --name FhLabels --type KeywordList`);

    // Starting a session there is refused the same way, at once, naming what registers them (the
    // server's own words were "no mapping defined for search attribute FhKind").
    for (const start of [() => startSession(bare, AGENT), () => sendPrompt(bare, AGENT, 'hi', { id: `bare-${RUN}` })]) {
      const refused = await start().then(() => undefined, (e: unknown) => e);
      expect(refused).toBeInstanceOf(SearchAttributesMissingError);
      expect((refused as Error).message).toMatch(/sessions are started with \(no mapping defined for search attribute Fh\w+\)/);
      expect((refused as Error).message).toContain('fh server');
    }
  });
});
