import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import { z } from 'zod';
import { commonErrorResponses } from '../src/http/error-envelope.js';
import type { ServiceMetrics } from '../src/observability/service-metrics.js';

export interface MetricsRoutesOptions {
  readonly metrics: ServiceMetrics;
}

/** `GET /metrics`: the Prometheus text exposition of the service's registry. */
export const metricsRoutes: FastifyPluginAsyncZod<MetricsRoutesOptions> = async (app, { metrics }) => {
  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        description:
          'Turns by kind, status and outcome; turns in flight; model call and tool durations; argument repairs by rung; disconnect-to-abort latency; process metrics. Behind the API token unless `METRICS_PUBLIC=true`.',
        tags: ['operations'],
        operationId: 'getMetrics',
        response: { 200: z.string().describe('Prometheus text format 0.0.4'), ...commonErrorResponses },
      },
    },
    async (_request, reply) => {
      const body = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).serializer((payload: unknown) => payload as string).send(body);
    },
  );
};
