import type { Span, Tracer } from '@opentelemetry/api';
import type { CompactionDecision } from '../../core/context/compaction/decide';
import type { ModelCallResult } from '../../core/ports';

/**
 * Spans the worker's activities add under Temporal's activity spans: model calls, tool calls and the
 * compaction decision a model activity makes. Off (and @opentelemetry/api never loaded) until a worker
 * turns telemetry on (createTelemetry). Activities do not run on replay, so a replaying worker adds none.
 * Attributes follow the OpenTelemetry GenAI semantic conventions (gen_ai.*).
 */
let tracer: Tracer | undefined;

export function setActivityTracer(t: Tracer | undefined): void {
  tracer = t;
}

type Attributes = Record<string, string | number | boolean | string[] | undefined>;

async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>, after?: (span: Span, value: T) => void): Promise<T> {
  if (!tracer) return fn(undefined);
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  return tracer.startActiveSpan(name, { kind: api.SpanKind.CLIENT, attributes: defined(attributes) }, async (span) => {
    try {
      const value = await fn(span);
      after?.(span, value);
      return value;
    } catch (err) {
      span.setAttribute('error.type', (err as { code?: string; type?: string }).code ?? (err as { type?: string }).type ?? (err instanceof Error ? err.name : 'error'));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** `chat <model>`: one Messages API call, recorded when it has answered (from `startedAt` to now). */
export function recordModelCallSpan(req: { model: string; maxTokens: number }, r: ModelCallResult, startedAt: number): void {
  if (!tracer) return;
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const span = tracer.startSpan(`chat ${req.model}`, {
    kind: api.SpanKind.CLIENT,
    startTime: startedAt,
    attributes: defined({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.system': 'anthropic',
      'gen_ai.request.model': req.model,
      'gen_ai.request.max_tokens': req.maxTokens,
      'gen_ai.response.model': r.model,
      'gen_ai.response.finish_reasons': r.stopReason ? [r.stopReason] : undefined,
      'gen_ai.usage.input_tokens': r.usage.inputTokens,
      'gen_ai.usage.output_tokens': r.usage.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': r.usage.cacheReadInputTokens,
      'gen_ai.usage.cache_creation.input_tokens': r.usage.cacheCreationInputTokens,
    }),
  });
  span.end();
}

/** `execute_tool <name>`: one tool call (an MCP server's, a built-in, the agent's own). */
export function toolCallSpan<T extends { isError: boolean }>(call: { name: string; callId: string; mcp?: boolean }, fn: () => Promise<T>): Promise<T> {
  return inSpan(
    `execute_tool ${call.name}`,
    { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.name, 'gen_ai.tool.call.id': call.callId, 'gen_ai.tool.type': call.mcp ? 'extension' : 'function' },
    fn,
    (span, r) => {
      if (r.isError) span.setAttribute('error.type', 'tool_error');
    },
  );
}

/** `fabric.compaction.decide`: the decision a model activity made before (or instead of) its call. */
export function recordDecisionSpan(decision: CompactionDecision | undefined): void {
  if (!tracer || !decision) return;
  const span = tracer.startSpan('fabric.compaction.decide', {
    attributes: defined({
      'fabric.compaction.compact': decision.compact,
      'fabric.compaction.reason': decision.reason ?? undefined,
      'fabric.compaction.why': decision.why,
      'fabric.compaction.estimated_tokens': decision.estimatedTokens,
      'fabric.compaction.threshold': decision.threshold,
      'fabric.compaction.context_window': decision.contextWindowTokens,
      'fabric.compaction.cut': decision.cut,
    }),
  });
  span.end();
}

function defined(a: Attributes): Record<string, string | number | boolean | string[]> {
  return Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as Record<string, string | number | boolean | string[]>;
}
