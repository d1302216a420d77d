import { SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { ModelRequest, ModelResponse } from '../../models/model-client.js';
import type { TurnEvent, TurnKind } from '../../events/turn-events.js';
import type { GenAiTracing } from '../../observability/genai-tracing.js';

/** The `gen_ai.provider.name` of a turn's model: the configured OpenAI-compatible provider, or the scripted model. */
export type ModelProviderName = 'openai' | 'turn_runtime.scripted';

/** One model call's span, ended with the response or the failure. */
export interface ModelCallSpan {
  readonly context: Context;
  succeed(response: ModelResponse, at: Date): void;
  fail(error: unknown, options: { readonly cancelled: boolean; readonly at: Date }): void;
}

/**
 * The spans of one turn, after the GenAI semantic conventions: `invoke_agent {agent}` for the
 * turn, a `chat {model}` child per model call, and an `execute_tool {name}` child per tool
 * call — children of the turn, not of the model call, so calls that run in parallel are
 * siblings that overlap. Tool spans are made from the turn's events (their `at` times), so
 * the loop needs no tracing code of its own.
 */
export class TurnTrace {
  readonly #tracing: GenAiTracing;
  readonly #turnSpan: Span;
  readonly #turnContext: Context;
  readonly #model: string;
  readonly #provider: ModelProviderName;
  readonly #toolSpans = new Map<string, Span>();
  /** The raw arguments of each call, from the model's response, for content capture. */
  readonly #arguments = new Map<string, string>();

  constructor(options: {
    readonly tracing: GenAiTracing;
    readonly parent: Context;
    readonly turnId: string;
    readonly agentId: string;
    readonly kind: TurnKind;
    readonly model: string;
    readonly provider: ModelProviderName;
    readonly at: Date;
  }) {
    this.#tracing = options.tracing;
    this.#model = options.model;
    this.#provider = options.provider;
    this.#turnSpan = options.tracing.tracer.startSpan(
      `invoke_agent ${options.agentId}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: options.at,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.provider.name': options.provider,
          'gen_ai.agent.id': options.agentId,
          'gen_ai.agent.name': options.agentId,
          'gen_ai.request.model': options.model,
          'turn_runtime.turn.id': options.turnId,
          'turn_runtime.turn.kind': options.kind,
        },
      },
      options.parent,
    );
    this.#turnContext = trace.setSpan(options.parent, this.#turnSpan);
  }

  /** Starts a `chat {model}` span under the turn; run the request inside its `context`. */
  startModelCall(request: ModelRequest, options: { readonly iteration: number; readonly at: Date }): ModelCallSpan {
    const capture = this.#tracing.captureContent;
    const span = this.#tracing.tracer.startSpan(
      `chat ${this.#model}`,
      {
        kind: SpanKind.CLIENT,
        startTime: options.at,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': this.#provider,
          'gen_ai.request.model': this.#model,
          'gen_ai.output.type': 'text',
          'turn_runtime.iteration': options.iteration,
          ...(capture ? contentOfRequest(request) : {}),
        },
      },
      this.#turnContext,
    );
    return {
      context: trace.setSpan(this.#turnContext, span),
      succeed: (response, at) => {
        for (const call of response.calls) this.#arguments.set(call.callId, call.arguments);
        span.setAttributes({
          'gen_ai.response.model': this.#model,
          'gen_ai.response.finish_reasons': [response.calls.length > 0 ? 'tool_call' : 'stop'],
          'gen_ai.usage.input_tokens': response.usage.inputTokens,
          'gen_ai.usage.output_tokens': response.usage.outputTokens,
          ...(capture ? { 'gen_ai.output.messages': JSON.stringify(outputMessages(response)) } : {}),
        });
        span.end(at);
      },
      fail: (error, failure) => {
        const message = error instanceof Error ? error.message : String(error);
        span.setAttribute('error.type', failure.cancelled ? 'cancelled' : errorType(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: failure.cancelled ? 'cancelled' : message });
        span.end(failure.at);
      },
    };
  }

  /** Follows the turn's events: tool spans, and the end of the turn. */
  observe(event: TurnEvent): void {
    switch (event.type) {
      case 'tool.started':
        this.#toolSpans.set(event.callId, this.#startTool(event, event.at));
        return;
      case 'tool.completed': {
        const span = this.#takeTool(event);
        if (this.#tracing.captureContent) span.setAttribute('gen_ai.tool.call.result', event.output);
        span.end(new Date(event.at));
        return;
      }
      case 'tool.failed': {
        const span = this.#takeTool(event);
        span.setAttribute('error.type', event.error.code);
        if (this.#tracing.captureContent) span.setAttribute('gen_ai.tool.call.result', event.output);
        span.setStatus({ code: SpanStatusCode.ERROR, message: event.error.message });
        span.end(new Date(event.at));
        return;
      }
      case 'turn.completed':
      case 'turn.failed':
      case 'turn.cancelled':
        this.#end(event);
        return;
      default:
        return;
    }
  }

  #startTool(event: { callId: string; name: string; namespace?: string | undefined; iteration: number; label?: string | undefined; repair?: string | undefined }, at: string): Span {
    const rawArguments = this.#arguments.get(event.callId);
    return this.#tracing.tracer.startSpan(
      `execute_tool ${event.name}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: new Date(at),
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': event.name,
          'gen_ai.tool.call.id': event.callId,
          'gen_ai.tool.type': 'function',
          'turn_runtime.iteration': event.iteration,
          ...(event.namespace === undefined ? {} : { 'turn_runtime.tool.namespace': event.namespace }),
          ...(event.label === undefined ? {} : { 'turn_runtime.tool.label': event.label }),
          ...(event.repair === undefined ? {} : { 'turn_runtime.tool.repair': event.repair }),
          ...(this.#tracing.captureContent && rawArguments !== undefined ? { 'gen_ai.tool.call.arguments': rawArguments } : {}),
        },
      },
      this.#turnContext,
    );
  }

  /** The span of a call that started; a call refused before it ran gets one of no length. */
  #takeTool(event: Extract<TurnEvent, { type: 'tool.completed' | 'tool.failed' }>): Span {
    const span = this.#toolSpans.get(event.callId) ?? this.#startTool(event, event.at);
    this.#toolSpans.delete(event.callId);
    return span;
  }

  #end(event: Extract<TurnEvent, { type: 'turn.completed' | 'turn.failed' | 'turn.cancelled' }>): void {
    const at = new Date(event.at);
    // A tool still open when the turn ended was cut short by it.
    for (const span of this.#toolSpans.values()) {
      span.setAttribute('error.type', 'aborted');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the turn ended first' });
      span.end(at);
    }
    this.#toolSpans.clear();
    this.#turnSpan.setAttributes({
      'gen_ai.usage.input_tokens': event.usage.inputTokens,
      'gen_ai.usage.output_tokens': event.usage.outputTokens,
      'turn_runtime.turn.iterations': event.iterations,
    });
    if (event.type === 'turn.completed') {
      this.#turnSpan.setAttribute('turn_runtime.turn.outcome', event.outcome);
    } else if (event.type === 'turn.failed') {
      this.#turnSpan.setAttribute('error.type', event.error.code);
      this.#turnSpan.setStatus({ code: SpanStatusCode.ERROR, message: event.error.message });
    } else {
      this.#turnSpan.setAttributes({ 'error.type': 'cancelled', 'turn_runtime.turn.cancel_reason': event.reason });
      this.#turnSpan.setStatus({ code: SpanStatusCode.ERROR, message: `cancelled: ${event.reason}` });
    }
    this.#turnSpan.end(at);
  }
}

function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'status' in error && typeof error.status === 'number') return String(error.status);
  return error instanceof Error ? error.name : 'error';
}

/** The request as the conventions' JSON content attributes: system instructions, input messages, tool definitions. */
function contentOfRequest(request: ModelRequest): Record<string, string> {
  return {
    ...(request.instructions === undefined ? {} : { 'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: request.instructions }]) }),
    'gen_ai.input.messages': JSON.stringify(request.input),
    'gen_ai.tool.definitions': JSON.stringify(request.tools),
  };
}

function outputMessages(response: ModelResponse): unknown[] {
  const parts: unknown[] = [];
  if (response.text !== '') parts.push({ type: 'text', content: response.text });
  for (const call of response.calls) parts.push({ type: 'tool_call', id: call.callId, name: call.name, arguments: call.arguments });
  return [{ role: 'assistant', parts, finish_reason: response.calls.length > 0 ? 'tool_call' : 'stop' }];
}
