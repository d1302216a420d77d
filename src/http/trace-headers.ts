import type { IncomingHttpHeaders } from 'node:http';
import type { TraceHeaders } from '../turns/observability/observe-turn.js';

/** The W3C trace context headers of a request (a repeated header is not trace context: ignored). */
export function traceHeadersOf(headers: IncomingHttpHeaders): TraceHeaders {
  const { traceparent, tracestate } = headers;
  return {
    ...(typeof traceparent === 'string' ? { traceparent } : {}),
    ...(typeof tracestate === 'string' ? { tracestate } : {}),
  };
}
