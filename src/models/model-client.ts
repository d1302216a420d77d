import type { JsonObject } from '../json.js';

/** A message part in the conversation, in the Responses API's own shapes. */
export type MessageContentPart =
  | { readonly type: 'input_text'; readonly text: string }
  | { readonly type: 'output_text'; readonly text: string }
  | { readonly type: 'input_image'; readonly image_url: string; readonly detail?: 'auto' | 'low' | 'high' | undefined };

/**
 * One item of the conversation a turn sends to the model: the Responses API's input item
 * shapes, because that is the wire format every provider here speaks. Items the runtime does
 * not interpret (reasoning, tool search) travel as `OpaqueItem`, unchanged.
 */
export type ConversationItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | OpaqueItem;

export interface MessageItem {
  readonly type: 'message';
  readonly role: 'user' | 'assistant' | 'system' | 'developer';
  readonly content: string | readonly MessageContentPart[];
}

export interface FunctionCallItem {
  readonly type: 'function_call';
  readonly call_id: string;
  readonly name: string;
  readonly arguments: string;
  readonly namespace?: string;
}

export interface FunctionCallOutputItem {
  readonly type: 'function_call_output';
  readonly call_id: string;
  readonly output: string | readonly MessageContentPart[];
}

/** An item passed back to the provider exactly as it came (reasoning, tool_search_call …). */
export interface OpaqueItem {
  readonly type: 'opaque';
  readonly item: JsonObject;
}

/** A function call the model made, as raw text: nothing is parsed or trusted yet. */
export interface ModelFunctionCall {
  readonly callId: string;
  readonly name: string;
  readonly namespace?: string;
  /** The raw argument string the model produced (may be malformed). */
  readonly arguments: string;
}

export interface ModelUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface ModelRequest {
  readonly instructions?: string;
  /** The whole conversation so far: every request carries all of it (`store: false`). */
  readonly input: readonly ConversationItem[];
  /** Provider tool definitions, sent exactly as given. */
  readonly tools: readonly JsonObject[];
  /** `tools` as JSON text, when the caller already has it (the catalog does): sent as it is. */
  readonly toolsJson?: string;
  /** `none` forbids tool calls (the final summary request). */
  readonly toolChoice: 'auto' | 'none';
}

export interface ModelResponse {
  /** The assistant text of this response (all message items joined). */
  readonly text: string;
  /** The function calls, in the order the model made them. */
  readonly calls: readonly ModelFunctionCall[];
  /** The response's items, to append to the conversation for the next request. */
  readonly outputItems: readonly ConversationItem[];
  readonly usage: ModelUsage;
}

export interface ModelCallOptions {
  /** Aborts the request at once (caller gone, cancel, timeout). */
  readonly signal: AbortSignal;
  /** Called for each piece of assistant text as it streams. */
  readonly onTextDelta: (delta: string) => void;
}

/** A model the loop can call: the OpenAI Responses client or the scripted model. */
export interface ModelClient {
  /** The model name recorded with the turn. */
  readonly model: string;
  /** How many responses it has given; the scripted model can start again after that many. */
  stepsTaken?(): number;
  respond(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse>;
}

/** The model call failed for a reason that is not the caller's abort. */
export class ModelError extends Error {
  /** HTTP status from the provider, when there was one. */
  readonly status: number | undefined;

  constructor(message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelError';
    this.status = options.status;
  }
}
