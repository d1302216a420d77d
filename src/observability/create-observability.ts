import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, ConsoleSpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Config } from '../config/config.js';
import { createGenAiTracing } from './genai-tracing.js';
import type { Observability } from './observability.js';
import { createServiceMetrics, type ProcessCounts, type StoreCounts } from './service-metrics.js';

/**
 * Metrics always; tracing when the configuration names an exporter (OTLP over HTTP/JSON, or
 * the console), or when `spanProcessors` are given (tests, with an in-memory exporter).
 */
export function createObservability(options: {
  readonly config: Config['observability'];
  readonly version: string;
  readonly spanProcessors?: readonly SpanProcessor[] | undefined;
  /** What the store-read gauges (approvals waiting, turns queued) count. */
  readonly counts: StoreCounts;
  /** What the in-memory gauges (MCP sessions) count. */
  readonly processCounts?: ProcessCounts;
}): Observability {
  const metrics = createServiceMetrics({ counts: options.counts, ...(options.processCounts === undefined ? {} : { processCounts: options.processCounts }) });
  const settings = options.config.tracing;
  const spanProcessors = options.spanProcessors ?? (settings === undefined ? undefined : [exportingProcessor(settings)]);
  if (spanProcessors === undefined) return { metrics, tracing: undefined };
  return {
    metrics,
    tracing: createGenAiTracing({
      spanProcessors,
      serviceName: settings?.serviceName ?? 'turn-runtime',
      serviceVersion: options.version,
      captureContent: options.config.captureContent,
    }),
  };
}

function exportingProcessor(settings: NonNullable<Config['observability']['tracing']>): SpanProcessor {
  if (settings.exporter === 'console') return new BatchSpanProcessor({ exporter: new ConsoleSpanExporter() });
  return new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: settings.url, headers: { ...settings.headers } }) });
}
