import { isJsonObject, type JsonObject, type JsonValue } from '../json.js';

/** What one stream event meant to the caller. */
export type StreamEventEffect =
  | { readonly kind: 'text'; readonly delta: string }
  | { readonly kind: 'completed' }
  | { readonly kind: 'incomplete'; readonly reason: string }
  | { readonly kind: 'failed'; readonly message: string; readonly code: string | undefined }
  | { readonly kind: 'none' };

/** The state of a streamed response once its events are in. */
export interface StreamedResponse {
  /** The response's output items, as the provider sent them. */
  readonly items: readonly JsonObject[];
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface ResponseStreamAccumulator {
  /** Folds one event (parsed JSON, untrusted) into the response and says what it meant. */
  apply(event: unknown): StreamEventEffect;
  /** Whether a terminal event (`response.completed` / `response.incomplete`) arrived. */
  readonly finished: boolean;
  /**
   * The response so far. The terminal response's `output` is the source of truth; the items
   * rebuilt from the deltas stand in when it has none (a cut stream, a terse compatible server).
   */
  result(): StreamedResponse;
}

/**
 * Rebuilds a Responses API response from its stream events, keyed by `output_index` like the
 * SDK's own `ResponseStream` does, but tolerant of servers that skip the bookkeeping events.
 */
export function createResponseStreamAccumulator(): ResponseStreamAccumulator {
  const built = new Map<number, JsonObject>();
  let terminal: JsonObject | undefined;

  const apply = (event: unknown): StreamEventEffect => {
    if (!isJsonObject(event)) return none;
    const outputIndex = typeof event['output_index'] === 'number' ? event['output_index'] : 0;
    switch (event['type']) {
      case 'response.output_item.added':
      case 'response.output_item.done':
        if (isJsonObject(event['item'])) built.set(outputIndex, structuredClone(event['item']));
        return none;
      case 'response.content_part.added':
        if (isJsonObject(event['part'])) setPart(built, outputIndex, contentIndexOf(event), structuredClone(event['part']));
        return none;
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const delta = typeof event['delta'] === 'string' ? event['delta'] : '';
        const field = event['type'] === 'response.refusal.delta' ? 'refusal' : 'text';
        appendToPart(built, outputIndex, contentIndexOf(event), field, delta);
        return delta === '' ? none : { kind: 'text', delta };
      }
      case 'response.function_call_arguments.delta': {
        const item = built.get(outputIndex);
        if (item !== undefined && typeof event['delta'] === 'string') {
          item['arguments'] = stringOf(item['arguments']) + event['delta'];
        }
        return none;
      }
      case 'response.function_call_arguments.done': {
        const item = built.get(outputIndex);
        if (item !== undefined && typeof event['arguments'] === 'string') item['arguments'] = event['arguments'];
        return none;
      }
      case 'response.completed':
        terminal = responseOf(event);
        return { kind: 'completed' };
      case 'response.incomplete': {
        terminal = responseOf(event);
        const details = terminal['incomplete_details'];
        const reason = isJsonObject(details) && typeof details['reason'] === 'string' ? details['reason'] : 'unknown';
        return { kind: 'incomplete', reason };
      }
      case 'response.failed': {
        const error = responseOf(event)['error'];
        return failure(isJsonObject(error) ? error : {}, 'the model response failed');
      }
      case 'error':
        // The documented shape is flat (`code`, `message`); some servers nest it under `error`.
        return failure(isJsonObject(event['error']) ? event['error'] : event, 'the model stream reported an error');
      default:
        return none;
    }
  };

  return {
    apply,
    get finished() {
      return terminal !== undefined;
    },
    result() {
      const output = terminal?.['output'];
      const items =
        Array.isArray(output) && output.length > 0
          ? output.filter(isJsonObject)
          : [...built.entries()].sort(([left], [right]) => left - right).map(([, item]) => item);
      const usage = terminal?.['usage'];
      return {
        items,
        inputTokens: isJsonObject(usage) ? numberOf(usage['input_tokens']) : 0,
        outputTokens: isJsonObject(usage) ? numberOf(usage['output_tokens']) : 0,
      };
    },
  };
}

const none: StreamEventEffect = { kind: 'none' };

function failure(error: JsonObject, fallback: string): StreamEventEffect {
  const message = typeof error['message'] === 'string' && error['message'] !== '' ? error['message'] : fallback;
  return { kind: 'failed', message, code: typeof error['code'] === 'string' ? error['code'] : undefined };
}

function responseOf(event: JsonObject): JsonObject {
  return isJsonObject(event['response']) ? event['response'] : {};
}

function contentIndexOf(event: JsonObject): number {
  return typeof event['content_index'] === 'number' ? event['content_index'] : 0;
}

function contentOf(built: Map<number, JsonObject>, outputIndex: number): JsonValue[] | undefined {
  const item = built.get(outputIndex);
  if (item === undefined) return undefined;
  const content = item['content'];
  if (Array.isArray(content)) return content;
  const fresh: JsonValue[] = [];
  item['content'] = fresh;
  return fresh;
}

function setPart(built: Map<number, JsonObject>, outputIndex: number, contentIndex: number, part: JsonObject): void {
  const content = contentOf(built, outputIndex);
  if (content !== undefined) content[contentIndex] = part;
}

function appendToPart(
  built: Map<number, JsonObject>,
  outputIndex: number,
  contentIndex: number,
  field: 'text' | 'refusal',
  delta: string,
): void {
  const content = contentOf(built, outputIndex);
  if (content === undefined) return;
  const existing = content[contentIndex];
  const part: JsonObject = isJsonObject(existing)
    ? existing
    : field === 'text'
      ? { type: 'output_text', text: '', annotations: [] }
      : { type: 'refusal', refusal: '' };
  part[field] = stringOf(part[field]) + delta;
  content[contentIndex] = part;
}

function stringOf(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function numberOf(value: JsonValue | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
