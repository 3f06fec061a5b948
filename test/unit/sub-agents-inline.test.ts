/**
 * Sub-agents inline: the same semantics as child workflows, in this process — the result reaches the
 * parent's model, the child's events are nested live, and the depth cap holds.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agentAsTool, type AgentEvent } from '@fabric-harness/sdk';
import { FakeAnthropicServer, callTools, say, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { delegator, recursive, worktreeDelegator } from '../fixtures/ecosystem-agents';
import { savedAnthropicEnv } from '../support/anthropic-env';

const lastToolResult = (req: RecordedRequest) => {
  const last = (req.body.messages as Array<{ content: Array<{ type: string; content?: unknown; is_error?: boolean }> }>).at(-1)!;
  const b = last.content.find((x) => x.type === 'tool_result')!;
  return { content: String(b.content), isError: b.is_error === true };
};

describe('sub-agents inline', () => {
  let fake: FakeAnthropicServer;
  const env = savedAnthropicEnv();
  beforeAll(async () => {
    fake = await FakeAnthropicServer.start();
    env.pointAt(fake.url);
  });
  afterAll(async () => {
    await fake.stop();
    env.restore();
  });

  it('runs in-process: the result reaches the parent, the events are nested under the child id', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-sub-inline-'));
    fake.enqueue(callTools({ name: 'eco-helper', input: { task: 'answer' } }), say('42'), say('It is 42.'));
    const start = fake.messageRequests().length;
    const events: AgentEvent[] = [];
    expect(await delegator.invoke({ task: 'ask', dir }, { onEvent: (e) => events.push(e) })).toBe('It is 42.');
    expect(lastToolResult(fake.messageRequests()[start + 2]!)).toEqual({ content: '42', isError: false });
    const nested = events.filter((e): e is Extract<AgentEvent, { type: 'subagent_event' }> => e.type === 'subagent_event');
    expect(nested.map((e) => e.data.event.type)).toContain('model_call');
    expect(new Set(nested.map((e) => e.data.childId)).size).toBe(1);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['subagent_started', 'subagent_finished']));
  });

  it('caps the depth', async () => {
    fake.enqueue(callTools({ name: 'again', input: { task: '1' } }), callTools({ name: 'again', input: { task: '2' } }), say('one level'), say('done'));
    const start = fake.messageRequests().length;
    expect(await recursive.invoke({ task: 'go' })).toBe('done');
    expect(lastToolResult(fake.messageRequests()[start + 2]!)).toMatchObject({ isError: true, content: expect.stringMatching(/past the limit of 1/) });
  });

  it('a worktree per sub-agent inline: the change lands on its branch, the parent directory is untouched', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-sub-inline-wt-'));
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    await fs.writeFile(path.join(dir, 'README'), 'base\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'base');
    fake.enqueue(
      callTools({ name: 'eco-helper', input: { task: 'write it' } }),
      callTools({ name: 'write_file', input: { path: 'child.txt', content: 'inline child' } }),
      say('written'),
      say('done'),
    );
    const start = fake.messageRequests().length;
    expect(await worktreeDelegator.invoke({ task: 'delegate', dir })).toBe('done');
    const result = lastToolResult(fake.messageRequests()[start + 3]!);
    const branch = /committed on branch (fh\/\S+) \(commit [0-9a-f]{12}\)/.exec(result.content)?.[1];
    expect(branch).toBeDefined();
    expect(git('show', `${branch}:child.txt`)).toBe('inline child');
    await expect(fs.stat(path.join(dir, 'child.txt'))).rejects.toThrow();
    expect(git('worktree', 'list').split('\n')).toHaveLength(1);
  });

  it('bad options are typed errors naming the field', () => {
    expect(() => agentAsTool(delegator, { description: '' })).toThrow(/description is required/);
    expect(() => agentAsTool(delegator, { description: 'x', maxDepth: 0 })).toThrow(/maxDepth must be a positive integer/);
  });
});
