/**
 * The workflow-side stream API. One StreamLog per workflow run, kept on the workflow's global object
 * (Temporal keeps each workflow's globals apart, also when it reuses one V8 context for many).
 *
 * Producers other than the session (staged runs, sub-agents) publish with `publishStreamEvent`.
 */
import { setHandler } from '@temporalio/workflow';
import type { AgentEvent } from '../../core/events';
import { streamEventFromAgentEvent } from '../../wire/stream-agent-events';
import { streamReadQuery, type StreamEvent, type StreamSlot } from '../../wire/stream';
import { StreamLog } from './log';

const KEY = '__fhStreamLog';

type Holder = { [KEY]?: StreamLog };

/**
 * Sets up this run's stream at `startOffset` (a continued run: where the previous run stopped) and
 * answers the stream query. Called once, first thing, by the agent and session workflows.
 */
export function installStreamLog(startOffset = 0, limit?: number): StreamLog {
  const log = new StreamLog(startOffset, limit);
  (globalThis as Holder)[KEY] = log;
  setHandler(streamReadQuery, (req) => log.read(Math.max(0, Math.floor(Number(req?.from) || 0)), req?.limit));
  return log;
}

/** This run's stream (one is made, at offset 0, if the workflow did not install one). */
export function streamLog(): StreamLog {
  return (globalThis as Holder)[KEY] ?? installStreamLog(0);
}

/**
 * Publishes a typed event on this run's stream, at the next offset (workflow code only). It is kept in
 * workflow state, read by clients with the stream query, and never enters history. Returns its offset.
 */
export function publishStreamEvent(event: StreamEvent): number {
  return streamLog().publish(event, Date.now());
}

/** An agent event (what onEvent gets) on the stream, as its typed stream event (some have none). */
export function publishAgentEvent(event: AgentEvent): void {
  const mapped = streamEventFromAgentEvent(event);
  if (mapped) streamLog().publish(mapped, event.at);
}

/** A block for a sub-agent's child workflow's stream (undefined: no room left); closed with closeStreamBlock. */
export function openSubAgentStream(workflowId: string, agent: string): StreamSlot | undefined {
  return streamLog().openSubAgent(workflowId, agent);
}

export function closeStreamBlock(slot: StreamSlot | undefined): void {
  if (slot) streamLog().close(slot.callId);
}

/** Events from here on answer this message (undefined: none). */
export function streamMessage(messageId: string | undefined): void {
  streamLog().messageId = messageId;
}
