/**
 * The Server-Sent Events a Responses API server sends for one scripted response, in the
 * order and shapes of `POST /v1/responses` with `stream: true` (see the openai-node types
 * in `src/resources/responses/responses.ts`): `event: <type>` + `data: <json>` frames, each
 * JSON carrying its `type` and an increasing `sequence_number`.
 */

/** A function call the fake model makes. */
export interface FakeFunctionCall {
  readonly name: string;
  /** The argument text: a string is streamed in several chunks, an array as exactly those chunks. */
  readonly arguments: string | readonly string[];
  readonly callId?: string;
  /** Set when the tool lives in a namespace (the item then carries `namespace`). */
  readonly namespace?: string;
}

/** One streamed response. */
export interface FakeStreamStep {
  /** Assistant text: a string is streamed word by word, an array as exactly those deltas. */
  readonly text?: string | readonly string[];
  readonly calls?: readonly FakeFunctionCall[];
  /** Output items sent whole before the message (reasoning, tool_search_call …). */
  readonly items?: readonly Record<string, unknown>[];
  /** Defaults: input ≈ request bytes / 4, output ≈ output characters / 4. */
  readonly usage?: { readonly inputTokens?: number; readonly outputTokens?: number };
  /**
   * How the response ends: `completed` (default); `incomplete` (the last item is cut off:
   * no `.done` events, status `incomplete`); `failed` (`response.failed` carrying `failure`);
   * `error` (an `error` event carrying `failure`, flat as documented or nested).
   */
  readonly end?: 'completed' | 'incomplete' | 'failed' | 'error';
  readonly incompleteReason?: string;
  readonly failure?: { readonly message: string; readonly code?: string };
  readonly errorShape?: 'flat' | 'nested';
  /** Leaves `output` empty in the terminal response, as some compatible servers do. */
  readonly omitFinalOutput?: boolean;
  /** Pause between two events; 0 (default) sends the whole stream in one write. */
  readonly eventDelayMs?: number;
  /** Pause before the response headers. */
  readonly headersDelayMs?: number;
  /** Holds the response headers until this settles: a model that answers when the test says so. */
  readonly headersAfter?: PromiseLike<unknown>;
  /**
   * Stop after `afterEvents` events (`true`: everything but the terminal event) and then:
   * `hang` keeps the stream open until the client goes away, `destroy` destroys the socket,
   * `endEarly` ends the HTTP response cleanly without a terminal event.
   */
  readonly hang?: boolean | { readonly afterEvents: number };
  readonly destroy?: boolean | { readonly afterEvents: number };
  readonly endEarly?: boolean | { readonly afterEvents: number };
  readonly headers?: Readonly<Record<string, string>>;
}

export interface BuildEventsContext {
  readonly responseId: string;
  readonly model: string;
  readonly toolChoice: unknown;
  readonly requestBytes: number;
  /** A fresh id with a prefix (`msg`, `fc`), unique within the provider. */
  readonly newId: (prefix: string) => string;
}

type Json = Record<string, unknown>;

/** The SSE frames of one response; the terminal event (if any) is the last frame. */
export function buildResponseFrames(step: FakeStreamStep, context: BuildEventsContext): string[] {
  const frames: string[] = [];
  const emit = (type: string, fields: Json): void => {
    frames.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: frames.length, ...fields })}\n\n`);
  };
  const end = step.end ?? 'completed';
  const output: Json[] = [];
  const createdAt = Math.floor(Date.now() / 1000);
  const response = (status: string, extra: Json = {}): Json => ({
    id: context.responseId,
    object: 'response',
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: null,
    model: context.model,
    output: status === 'in_progress' || step.omitFinalOutput === true ? [] : output,
    parallel_tool_calls: true,
    tool_choice: context.toolChoice ?? 'auto',
    store: false,
    usage: null,
    ...extra,
  });

  emit('response.created', { response: response('in_progress') });
  emit('response.in_progress', { response: response('in_progress') });

  const itemCount = (step.items?.length ?? 0) + (step.text === undefined ? 0 : 1) + (step.calls?.length ?? 0);
  const isCutOff = (outputIndex: number): boolean => end === 'incomplete' && outputIndex === itemCount - 1;
  let outputCharacters = 0;

  for (const item of step.items ?? []) {
    const outputIndex = output.length;
    output.push(item);
    emit('response.output_item.added', { output_index: outputIndex, item });
    emit('response.output_item.done', { output_index: outputIndex, item });
  }

  if (step.text !== undefined) {
    const outputIndex = output.length;
    const deltas = typeof step.text === 'string' ? splitWords(step.text) : step.text;
    const text = deltas.join('');
    outputCharacters += text.length;
    const id = context.newId('msg');
    const cut = isCutOff(outputIndex);
    const part = { type: 'output_text', annotations: [], logprobs: [], text };
    const position = { item_id: id, output_index: outputIndex, content_index: 0 };
    emit('response.output_item.added', {
      output_index: outputIndex,
      item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    emit('response.content_part.added', { ...position, part: { ...part, text: '' } });
    for (const delta of deltas) emit('response.output_text.delta', { ...position, delta, logprobs: [] });
    const item = { id, type: 'message', status: cut ? 'incomplete' : 'completed', role: 'assistant', content: [part] };
    output.push(item);
    if (!cut) {
      emit('response.output_text.done', { ...position, text, logprobs: [] });
      emit('response.content_part.done', { ...position, part });
      emit('response.output_item.done', { output_index: outputIndex, item });
    }
  }

  for (const [callNumber, call] of (step.calls ?? []).entries()) {
    const outputIndex = output.length;
    const chunks = typeof call.arguments === 'string' ? splitInto(call.arguments, 3) : call.arguments;
    const argumentsText = chunks.join('');
    outputCharacters += argumentsText.length;
    const id = context.newId('fc');
    const cut = isCutOff(outputIndex);
    const base = {
      id,
      type: 'function_call',
      call_id: call.callId ?? `call_${context.responseId}_${callNumber}`,
      name: call.name,
      ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
    };
    emit('response.output_item.added', { output_index: outputIndex, item: { ...base, status: 'in_progress', arguments: '' } });
    for (const delta of chunks) emit('response.function_call_arguments.delta', { item_id: id, output_index: outputIndex, delta });
    const item = { ...base, status: cut ? 'incomplete' : 'completed', arguments: argumentsText };
    output.push(item);
    if (!cut) {
      emit('response.function_call_arguments.done', { item_id: id, output_index: outputIndex, name: call.name, arguments: argumentsText });
      emit('response.output_item.done', { output_index: outputIndex, item });
    }
  }

  const inputTokens = step.usage?.inputTokens ?? Math.ceil(context.requestBytes / 4);
  const outputTokens = step.usage?.outputTokens ?? Math.ceil(outputCharacters / 4);
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
  const failure = { code: step.failure?.code ?? 'server_error', message: step.failure?.message ?? 'The server had an error while processing your request.' };

  switch (end) {
    case 'completed':
      emit('response.completed', { response: response('completed', { usage }) });
      break;
    case 'incomplete':
      emit('response.incomplete', {
        response: response('incomplete', { usage, incomplete_details: { reason: step.incompleteReason ?? 'max_output_tokens' } }),
      });
      break;
    case 'failed':
      emit('response.failed', { response: response('failed', { error: failure, usage }) });
      break;
    case 'error':
      emit('error', step.errorShape === 'nested' ? { error: { ...failure, param: null } } : { ...failure, param: null });
      break;
  }
  return frames;
}

/** "Hello big world" → ["Hello ", "big ", "world"]: several deltas, as a model streams them. */
function splitWords(text: string): string[] {
  return text.match(/\S+\s*|\s+/gu) ?? [text];
}

/** Splits into `parts` nearly equal pieces, never inside a character. */
function splitInto(text: string, parts: number): string[] {
  const characters = Array.from(text);
  if (characters.length < parts) return characters.length === 0 ? [] : [text];
  const size = Math.ceil(characters.length / parts);
  const chunks: string[] = [];
  for (let start = 0; start < characters.length; start += size) chunks.push(characters.slice(start, start + size).join(''));
  return chunks;
}
