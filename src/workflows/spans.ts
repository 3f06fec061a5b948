import type { AgentEvent } from '../core/events';

/**
 * Spans for what workflow code decides — compactions, overflow-ladder steps, approvals, sub-agents —
 * when the worker runs Temporal's OpenTelemetry workflow interceptors (createTelemetry). Those register
 * a tracer provider in the workflow's global OpenTelemetry slot; this module looks it up there and
 * imports nothing, so a bundle without telemetry carries no OpenTelemetry code and makes no spans.
 *
 * Replay: span ids come from the workflow's seeded random, and Temporal's exporter sink does not run
 * while replaying, so a replaying worker exports nothing and a re-run exports the same ids.
 */
interface MinimalSpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  end(): void;
}
interface MinimalTracer {
  startSpan(name: string, options?: { attributes?: Record<string, string | number | boolean> }): MinimalSpan;
}

const OTEL_API = Symbol.for('opentelemetry.js.api.1');

function tracer(): MinimalTracer | undefined {
  const api = (globalThis as Record<symbol, { trace?: { getTracer(name: string): MinimalTracer } } | undefined>)[OTEL_API];
  return api?.trace?.getTracer('fabric-harness');
}

/** Turns a run's events into spans; spans that wait (an approval, a compaction) end with the event that closes them. */
export class WorkflowSpans {
  private readonly open = new Map<string, MinimalSpan>();

  /** `conversationId`: the run's workflow id, as GenAI's `gen_ai.conversation.id` on every span. */
  constructor(private readonly conversationId?: string) {}

  onEvent(event: AgentEvent): void {
    const found = tracer();
    if (!found) return;
    const conversation: Record<string, string> = this.conversationId !== undefined ? { 'gen_ai.conversation.id': this.conversationId } : {};
    const t: MinimalTracer = { startSpan: (name, options) => found.startSpan(name, { attributes: { ...conversation, ...options?.attributes } }) };
    const one = (name: string, attributes: Record<string, string | number | boolean | undefined>) => t.startSpan(name, { attributes: defined(attributes) }).end();
    switch (event.type) {
      case 'compaction_started':
        this.open.set('compaction', t.startSpan('fabric.compaction', { attributes: { 'fabric.compaction.reason': event.data.reason, 'fabric.compaction.estimated_tokens': event.data.estimatedTokens } }));
        return;
      case 'compaction': {
        const span = this.open.get('compaction') ?? t.startSpan('fabric.compaction');
        this.open.delete('compaction');
        span.setAttribute('fabric.compaction.tokens_before', event.data.tokensBefore);
        span.setAttribute('fabric.compaction.tokens_after', event.data.tokensAfter);
        span.setAttribute('fabric.compaction.messages_after', event.data.messagesAfter);
        span.end();
        return;
      }
      case 'masking':
        return one('fabric.masking', { 'fabric.masking.masked': event.data.masked, 'fabric.masking.saved_tokens': event.data.savedTokens });
      case 'overflow_step':
        return one(`fabric.overflow_step ${event.data.step}`, { 'fabric.ladder.step': event.data.step, 'fabric.ladder.applied': event.data.applied, 'fabric.ladder.why': event.data.why });
      case 'approval_requested':
        this.open.set(`approval:${event.data.id}`, t.startSpan(`fabric.approval ${event.data.name}`, { attributes: { 'gen_ai.tool.name': event.data.name, 'gen_ai.tool.call.id': event.data.id } }));
        return;
      case 'approval_decided': {
        const key = `approval:${event.data.id}`;
        const span = this.open.get(key) ?? t.startSpan(`fabric.approval ${event.data.name}`);
        this.open.delete(key);
        span.setAttribute('fabric.approval.approved', event.data.approved);
        span.end();
        return;
      }
      case 'subagent_started':
        this.open.set(`sub:${event.data.childId}`, t.startSpan(`invoke_agent ${event.data.agent}`, { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': event.data.agent, 'fabric.subagent.id': event.data.childId } }));
        return;
      case 'subagent_finished': {
        const span = this.open.get(`sub:${event.data.childId}`);
        this.open.delete(`sub:${event.data.childId}`);
        span?.setAttribute('fabric.subagent.ok', event.data.ok);
        span?.end();
        return;
      }
      case 'interrupted':
        return one('fabric.interrupted', { 'fabric.interrupted.during': event.data.during });
      default:
        return;
    }
  }
}

function defined(a: Record<string, string | number | boolean | undefined>): Record<string, string | number | boolean> {
  return Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as Record<string, string | number | boolean>;
}
