/**
 * 0.5.0's ecosystem histories (called by record.ts): an MCP tool call (the tool list recorded by
 * fhMcpList, then calls through fhTool on a stdio server written with the MCP SDK) and a sub-agent
 * run (a child workflow, whose own history is recorded too).
 */
import * as path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { startAgent, type AgentHandle } from '../../src/client';
import { callTools, say, type FakeAnthropicServer } from '../../src/testing';
import { delegator, mcpUser } from '../fixtures/ecosystem-agents';

export const ECOSYSTEM_HISTORIES = ['mcp-call', 'sub-agent-run', 'sub-agent-child'];

export async function recordEcosystem(
  w: { client: Client; taskQueue: string },
  fake: FakeAnthropicServer,
  dir: string,
  save: (name: string, handle: Pick<WorkflowHandle, 'result' | 'fetchHistory'> | AgentHandle) => Promise<void>,
): Promise<void> {
  const server = { name: 't', command: process.execPath, args: [path.resolve(__dirname, '../fixtures/mcp-server.js')] };
  fake.enqueue(callTools({ name: 't__add', input: { a: 2, b: 3 } }, { name: 't__count', input: {} }), callTools({ name: 't__fail', input: {} }), say('5, and the failure was reported.'));
  const mcp = await startAgent(w.client, mcpUser, { task: 'add 2 and 3, count, then fail', dir, servers: [server] }, { workflowId: 'recorded-mcp-call', taskQueue: w.taskQueue });
  await save('mcp-call', mcp);

  fake.enqueue(callTools({ name: 'eco-helper', input: { task: 'say what 6 times 7 is' } }), say('42'), say('The helper says 42.'));
  const sub = await startAgent(w.client, delegator, { task: 'ask the helper', dir }, { workflowId: 'recorded-sub-agent-run', taskQueue: w.taskQueue });
  await save('sub-agent-run', sub);
  const history = await sub.fetchHistory();
  const childId = history.events!.find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)?.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
  if (!childId) throw new Error('sub-agent-run: no child workflow was started');
  await save('sub-agent-child', w.client.workflow.getHandle(childId));
}
