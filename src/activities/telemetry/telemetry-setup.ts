import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SimplePlugin } from '@temporalio/plugin';
import { z } from 'zod';
import { parseWith } from '../../core/validate';
import { setActivityTracer } from './telemetry';

/**
 * OpenTelemetry tracing, opt-in: `createTelemetry()` loads the OpenTelemetry packages (nothing of them
 * is loaded before) and returns a Temporal plugin for the worker (`createWorker({ telemetry })`) and
 * the client (`connectClient(settings, { plugins: [telemetry.plugin] })`).
 *
 * Spans: Temporal's own (@temporalio/interceptors-opentelemetry: StartWorkflow, RunWorkflow,
 * StartActivity, RunActivity, updates, child workflows), and ours under them — `chat <model>` per
 * model call, `execute_tool <name>` per tool call, `fabric.compaction.decide`, `fabric.compaction`,
 * `fabric.overflow_step <step>`, `fabric.approval <tool>`, `invoke_agent <name>` — with GenAI
 * semantic-convention attributes. Exported over OTLP/HTTP (JSON).
 */
export const telemetryOptionsSchema = z
  .object({
    /** The OTLP/HTTP traces endpoint (default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else http://localhost:4318/v1/traces). */
    endpoint: z.string().url().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** The `service.name` resource attribute (default 'fabric-harness'). */
    serviceName: z.string().min(1).optional(),
    /** Export each span as it ends instead of in batches (tests, short scripts). */
    exportImmediately: z.boolean().optional(),
    /** Your own span processor instead of the OTLP exporter. */
    spanProcessor: z.custom<SpanProcessor>((v) => typeof v === 'object' && v !== null && typeof (v as SpanProcessor).onEnd === 'function', { message: 'expected a SpanProcessor' }).optional(),
  })
  .strict();

export type TelemetryOptions = z.infer<typeof telemetryOptionsSchema>;

export interface Telemetry {
  /** Add to the worker (createWorker does) and the client (`plugins`). */
  readonly plugin: SimplePlugin;
  /** Sends the spans not exported yet. */
  forceFlush(): Promise<void>;
  /** Flushes and stops exporting. */
  shutdown(): Promise<void>;
}

export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  const opts = parseWith(telemetryOptionsSchema, options, 'telemetry') as TelemetryOptions;
  const tracing = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { Resource } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { OpenTelemetryPlugin } = require('@temporalio/interceptors-opentelemetry') as typeof import('@temporalio/interceptors-opentelemetry');
  const resource = new Resource({ 'service.name': opts.serviceName ?? 'fabric-harness' });
  const processor = opts.spanProcessor ?? otlpProcessor(tracing, opts);
  const provider = new tracing.BasicTracerProvider({ resource });
  provider.addSpanProcessor(processor);
  // Activities' spans nest under Temporal's activity span through the active context.
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  const tracer = provider.getTracer('fabric-harness');
  setActivityTracer(tracer);
  const plugin = new OpenTelemetryPlugin({ resource, spanProcessor: processor, tracer: provider.getTracer('@temporalio/interceptors-opentelemetry') });
  return {
    plugin,
    forceFlush: () => provider.forceFlush(),
    async shutdown() {
      setActivityTracer(undefined);
      await provider.shutdown();
    },
  };
}

function otlpProcessor(tracing: typeof import('@opentelemetry/sdk-trace-base'), opts: TelemetryOptions): SpanProcessor {
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const base = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = opts.endpoint ?? process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/$/, '')}/v1/traces` : 'http://localhost:4318/v1/traces');
  const exporter = new OTLPTraceExporter({ url, ...(opts.headers ? { headers: opts.headers } : {}) });
  return opts.exportImmediately ? new tracing.SimpleSpanProcessor(exporter) : new tracing.BatchSpanProcessor(exporter);
}
