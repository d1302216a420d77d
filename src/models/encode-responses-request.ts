import type { JsonObject, JsonValue } from '../json.js';
import { takeOutputJson, stringifyWithOutputJson } from '../output-json.js';
import type { ConversationItem, ModelRequest } from './model-client.js';

/**
 * A Responses request body as the bytes sent: the UTF-8 of the text `JSON.stringify` would make
 * of it, built from pieces that are serialised and encoded once, not on every model call.
 *
 * Every request carries the whole conversation and the whole tool list (`store: false`), so a
 * turn of three model calls would otherwise serialise its first items three times and its
 * tool list (kilobytes of schemas) once per call, and fetch would then encode that text to
 * UTF-8 again. Here each conversation item's JSON is made and encoded the first time the item
 * is sent, and kept with the item (items do not change once in the conversation); the tool list
 * comes as the catalog's own text, encoded once per list; and the body is those bytes, joined
 * only as the request goes out.
 */
export function encodeResponsesRequest(options: { readonly model: string; readonly request: ModelRequest; readonly includeEncryptedReasoning: boolean }): EncodedBody {
  const { model, request } = options;
  let head = `{"model":${JSON.stringify(model)}`;
  if (request.instructions !== undefined) head += `,"instructions":${JSON.stringify(request.instructions)}`;
  const pieces: Uint8Array[] = [Buffer.from(`${head},"input":[`)];
  request.input.forEach((item, index) => {
    if (index > 0) pieces.push(COMMA);
    pieces.push(itemBytes(item));
  });
  pieces.push(TOOLS, request.toolsJson === undefined ? Buffer.from(JSON.stringify(request.tools)) : toolListBytes(request.toolsJson));
  let tail = '';
  // Tool settings only with tools: some compatible servers refuse them on a tool-less request.
  if (request.tools.length > 0) tail += `,"tool_choice":${JSON.stringify(request.toolChoice)},"parallel_tool_calls":true`;
  tail += ',"store":false,"stream":true';
  if (options.includeEncryptedReasoning) tail += ',"include":["reasoning.encrypted_content"]';
  pieces.push(Buffer.from(`${tail}}`));
  let byteLength = 0;
  for (const piece of pieces) byteLength += piece.byteLength;
  return { pieces, byteLength };
}

/**
 * A body as the pieces it is made of, in order: they are joined only when it is sent (see
 * providerRequestBody), so that a turn waiting on its model holds no copy of its conversation
 * beyond the pieces its items keep anyway.
 */
export interface EncodedBody {
  readonly pieces: readonly Uint8Array[];
  readonly byteLength: number;
}

const COMMA = Buffer.from(',');
const TOOLS = Buffer.from('],"tools":');

/**
 * Kept bytes have a buffer of their own: a small `Buffer.from` is a slice of a shared 8 KiB
 * pool, and one kept slice would keep its whole pool alive for as long as its turn waits.
 */
const encoder = new TextEncoder();

const itemTexts = new WeakMap<ConversationItem, Uint8Array>();

function itemBytes(item: ConversationItem): Uint8Array {
  let bytes = itemTexts.get(item);
  if (bytes === undefined) {
    // A tool's output comes with its JSON text made, for its event (see output-json.ts).
    bytes = encoder.encode(stringifyWithOutputJson(toResponsesItem(item), takeOutputJson(item)));
    itemTexts.set(item, bytes);
  }
  return bytes;
}

/** Tool lists kept as bytes; past this many the memory starts over (there are a handful in a deployment). */
const MAX_TOOL_LISTS = 64;
const toolLists = new Map<string, Uint8Array>();

/** A tool list's text as bytes, encoded once for all the turns that show that list (see sharedToolList). */
function toolListBytes(json: string): Uint8Array {
  let bytes = toolLists.get(json);
  if (bytes === undefined) {
    bytes = encoder.encode(json);
    if (toolLists.size >= MAX_TOOL_LISTS) toolLists.clear();
    toolLists.set(json, bytes);
  }
  return bytes;
}

/**
 * One conversation item as a Responses input item. Our items already are the wire shapes, so
 * this only drops what is ours (the `opaque` wrapper) and leaves out absent optionals.
 */
export function toResponsesItem(item: ConversationItem): JsonObject {
  switch (item.type) {
    case 'message':
      return { type: 'message', role: item.role, content: item.content as JsonValue };
    case 'function_call':
      return {
        type: 'function_call',
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        ...(item.namespace === undefined ? {} : { namespace: item.namespace }),
      };
    case 'function_call_output':
      return { type: 'function_call_output', call_id: item.call_id, output: item.output as JsonValue };
    case 'opaque':
      return item.item;
  }
}
