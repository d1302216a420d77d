import { ROOT_CONTEXT, defaultTextMapGetter, defaultTextMapSetter, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { TracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace';

/**
 * Tracing for turns, when it is on: a tracer from a provider this runtime owns (nothing is
 * registered globally, so tests can run several runtimes with their own exporters), its own
 * async context (so the model call's span is the parent the outgoing `traceparent` names)
 * and the W3C propagator for the incoming and outgoing headers. Off, there is no such object
 * at all, and nothing on the turn's path does any tracing work.
 */
export interface GenAiTracing {
  readonly tracer: Tracer;
  /** Message, argument and result content on spans (`OTEL_GENAI_CAPTURE_CONTENT=true`). */
  readonly captureContent: boolean;
  /** The parent context named by incoming `traceparent` / `tracestate` headers (ROOT when none). */
  extract(headers: Readonly<Record<string, string | undefined>>): Context;
  /** Runs `task` with `context` active, so a request made inside it carries its span. */
  withContext<T>(context: Context, task: () => T): T;
  /** The span of the active context, if any. */
  activeSpan(): Span | undefined;
  /** Adds `traceparent` (and `tracestate`) for the active span to outgoing request headers. */
  inject(headers: Record<string, string>): void;
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

export function createGenAiTracing(options: {
  readonly spanProcessors: readonly SpanProcessor[];
  readonly serviceName: string;
  readonly serviceVersion: string;
  readonly captureContent: boolean;
}): GenAiTracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.serviceVersion }),
    spanProcessors: [...options.spanProcessors],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  const propagator = new W3CTraceContextPropagator();
  return {
    tracer: provider.getTracer('turn-runtime', options.serviceVersion),
    captureContent: options.captureContent,
    extract: (headers) => propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter),
    withContext: (context, task) => contextManager.with(context, task),
    activeSpan: () => trace.getSpan(contextManager.active()),
    inject: (headers) => {
      const active = contextManager.active();
      if (trace.getSpan(active) !== undefined) propagator.inject(active, headers, defaultTextMapSetter);
    },
    shutdown: async () => {
      contextManager.disable();
      await provider.shutdown();
    },
  };
}

/**
 * A `fetch` for the model provider's SDK client that passes the active model call's trace
 * context on in `traceparent`, so the provider's own spans join the turn's trace, and marks
 * each HTTP attempt (retries included) as an event on that model call's span.
 */
export function createTracingFetch(options: { readonly tracing: GenAiTracing; readonly fetch?: typeof fetch }): typeof fetch {
  const inner = options.fetch ?? fetch;
  const attempts = new WeakMap<Span, number>();
  return async (input, init) => {
    const span = options.tracing.activeSpan();
    if (span === undefined) return inner(input, init);
    const headers = new Headers(init?.headers);
    const carrier: Record<string, string> = {};
    options.tracing.inject(carrier);
    for (const [name, value] of Object.entries(carrier)) headers.set(name, value);
    const resendCount = attempts.get(span) ?? 0;
    attempts.set(span, resendCount + 1);
    try {
      const response = await inner(input, { ...init, headers });
      span.addEvent('turn_runtime.model.attempt', { 'http.request.resend_count': resendCount, 'http.response.status_code': response.status });
      return response;
    } catch (error) {
      span.addEvent('turn_runtime.model.attempt', { 'http.request.resend_count': resendCount, 'error.type': error instanceof Error ? error.name : 'error' });
      throw error;
    }
  };
}
