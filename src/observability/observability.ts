import type { GenAiTracing } from './genai-tracing.js';
import type { ServiceMetrics } from './service-metrics.js';

/**
 * What the service is watched with, built once by the runtime and handed down: the metrics
 * registry (always), and tracing when an exporter is configured (undefined otherwise, so a
 * turn does no tracing work at all).
 */
export interface Observability {
  readonly metrics: ServiceMetrics;
  readonly tracing: GenAiTracing | undefined;
}
