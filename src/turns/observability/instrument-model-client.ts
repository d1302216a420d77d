import type { Clock } from '../../clock.js';
import type { ModelClient } from '../../models/model-client.js';
import type { GenAiTracing } from '../../observability/genai-tracing.js';
import type { ServiceMetrics } from '../../observability/service-metrics.js';
import type { ModelProviderName, TurnTrace } from './turn-trace.js';

/**
 * Wraps a turn's model so each call is timed (`turn_runtime_model_call_duration_seconds`)
 * and, with tracing on, runs inside its `chat {model}` span. The loop calls the model once
 * per iteration, so the n-th call is iteration n.
 */
export function instrumentModelClient(options: {
  readonly model: ModelClient;
  readonly provider: ModelProviderName;
  readonly metrics: ServiceMetrics;
  readonly clock: Clock;
  readonly tracing: { readonly tracing: GenAiTracing; readonly trace: TurnTrace } | undefined;
}): ModelClient {
  const { model, provider, metrics, clock, tracing } = options;
  let iteration = 0;
  const stepsTaken = model.stepsTaken?.bind(model);
  return {
    model: model.model,
    // A scripted model's position is what a parked turn stores to go on from the right step.
    ...(stepsTaken === undefined ? {} : { stepsTaken }),
    async respond(request, call) {
      iteration += 1;
      const started = clock.monotonicMs();
      const span = tracing?.trace.startModelCall(request, { iteration, at: clock.now() });
      const seconds = () => (clock.monotonicMs() - started) / 1000;
      try {
        const response = span === undefined || tracing === undefined ? await model.respond(request, call) : await tracing.tracing.withContext(span.context, () => model.respond(request, call));
        metrics.modelCallDuration.observe({ provider, outcome: 'ok' }, seconds());
        span?.succeed(response, clock.now());
        return response;
      } catch (error) {
        const cancelled = call.signal.aborted;
        metrics.modelCallDuration.observe({ provider, outcome: cancelled ? 'cancelled' : 'error' }, seconds());
        span?.fail(error, { cancelled, at: clock.now() });
        throw error;
      }
    },
  };
}
