import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { ModelClient } from '../../models/model-client.js';
import type { TurnEvent, TurnKind } from '../../events/turn-events.js';
import type { TurnRun } from '../turn-run.js';
import { instrumentModelClient } from './instrument-model-client.js';
import type { Observability } from '../../observability/observability.js';
import { TurnTrace, type ModelProviderName } from './turn-trace.js';

/** Trace context headers of the request that started the turn. */
export interface TraceHeaders {
  readonly traceparent?: string | undefined;
  readonly tracestate?: string | undefined;
}

/**
 * Watches one turn from its events: a log line at its start and one at its end, the metrics
 * (in flight, turns by outcome, tool durations, repair rungs, disconnect-to-abort latency)
 * and, with tracing on, its spans. Returns the turn's model, wrapped to time (and trace)
 * each call. Subscribes before `turn.started` is emitted, so it sees every event.
 */
export function observeTurn(options: {
  readonly observability: Observability;
  readonly run: TurnRun;
  readonly model: ModelClient;
  readonly provider: ModelProviderName;
  readonly traceHeaders?: TraceHeaders | undefined;
  readonly logger: Logger;
  readonly clock: Clock;
}): { readonly model: ModelClient } {
  const { observability, run, logger, clock } = options;
  const { metrics, tracing } = observability;
  const kind: TurnKind = run.kind;
  const startedMs = clock.monotonicMs();
  const turnTrace =
    tracing === undefined
      ? undefined
      : new TurnTrace({
          tracing,
          parent: tracing.extract({ traceparent: options.traceHeaders?.traceparent, tracestate: options.traceHeaders?.tracestate }),
          turnId: run.id,
          agentId: run.agentId,
          kind,
          model: options.model.model,
          provider: options.provider,
          at: clock.now(),
        });
  metrics.turnsInFlight.inc({ kind });

  let abortedAtMs: number | undefined;
  run.signal.addEventListener(
    'abort',
    () => {
      if (run.cancelReason === 'client_disconnected') abortedAtMs = clock.monotonicMs();
    },
    { once: true },
  );
  const knownTools = new Set<string>();
  const started = new Set<string>();
  const toolLabel = (name: string): string => (knownTools.has(name) ? name : 'unknown');

  const onEvent = (event: TurnEvent): void => {
    turnTrace?.observe(event);
    switch (event.type) {
      case 'turn.started':
        for (const name of event.tools) knownTools.add(name);
        logger.info({ kind, model: event.model, tools: event.tools.length }, 'turn started');
        return;
      case 'tool.started':
        started.add(event.callId);
        if (event.repair !== 'none') metrics.argumentRepairs.inc({ rung: event.repair });
        return;
      case 'tool.completed':
        metrics.toolDuration.observe({ tool: toolLabel(event.name), outcome: 'completed' }, event.durationMs / 1000);
        return;
      case 'tool.failed':
        // A call refused before it started still had its arguments repaired (or not).
        if (!started.has(event.callId) && event.repair !== undefined && event.repair !== 'none') metrics.argumentRepairs.inc({ rung: event.repair });
        metrics.toolDuration.observe({ tool: toolLabel(event.name), outcome: event.error.code }, event.durationMs / 1000);
        return;
      case 'turn.completed':
      case 'turn.failed':
      case 'turn.cancelled':
        finish(event);
        return;
      default:
        return;
    }
  };

  const finish = (event: Extract<TurnEvent, { type: 'turn.completed' | 'turn.failed' | 'turn.cancelled' }>): void => {
    metrics.turnsInFlight.dec({ kind });
    const status = event.type.slice('turn.'.length);
    const outcome = event.type === 'turn.completed' ? event.outcome : event.type === 'turn.failed' ? (event.error.reason ?? event.error.code) : event.reason;
    metrics.turns.inc({ kind, status, outcome });
    if (event.type === 'turn.cancelled' && event.reason === 'client_disconnected' && abortedAtMs !== undefined) {
      metrics.disconnectToAbort.observe((clock.monotonicMs() - abortedAtMs) / 1000);
    }
    const line = {
      kind,
      model: options.model.model,
      status,
      outcome,
      iterations: event.iterations,
      inputTokens: event.usage.inputTokens,
      outputTokens: event.usage.outputTokens,
      durationMs: Math.round(clock.monotonicMs() - startedMs),
      ...(event.type === 'turn.failed' ? { error: event.error } : {}),
    };
    logger.info(line, 'turn ended');
  };

  run.attach(0, (event) => {
    try {
      onEvent(event);
    } catch (error) {
      // Watching a turn must never break it.
      logger.warn({ err: error }, 'could not observe a turn event');
    }
    return true;
  });
  // A turn parked for approval ends here without a terminal event; its resumed run is another turn's worth of work.
  void run.done.then(() => {
    if (run.suspended) metrics.turnsInFlight.dec({ kind });
  });
  return {
    model: instrumentModelClient({
      model: options.model,
      provider: options.provider,
      metrics,
      clock,
      tracing: tracing === undefined || turnTrace === undefined ? undefined : { tracing, trace: turnTrace },
    }),
  };
}
