import type { JsonObject, JsonValue } from '../json.js';
import type { ConversationItem, ModelRequest } from './model-client.js';

/**
 * A Responses request body as the bytes sent: the text `JSON.stringify` would make of it,
 * built from pieces that are serialised once, not on every model call.
 *
 * Every request carries the whole conversation and the whole tool list (`store: false`), so a
 * turn of three model calls would otherwise serialise its first items three times and its
 * tool list (kilobytes of schemas) once per call, and fetch would then encode that text to
 * UTF-8 again. Here each conversation item's JSON is made the first time the item is sent and
 * kept with the item (items do not change once in the conversation), the tool list comes as
 * the catalog's own text, and the body is encoded once, to bytes that the SDK passes on as they
 * are.
 */
export function encodeResponsesRequest(options: { readonly model: string; readonly request: ModelRequest; readonly includeEncryptedReasoning: boolean }): Uint8Array {
  return Buffer.from(responsesRequestJson(options), 'utf8');
}

/** The body's JSON text; exported for the tests, which hold it to `JSON.stringify` of the same body. */
export function responsesRequestJson(options: { readonly model: string; readonly request: ModelRequest; readonly includeEncryptedReasoning: boolean }): string {
  const { model, request } = options;
  let json = `{"model":${JSON.stringify(model)}`;
  if (request.instructions !== undefined) json += `,"instructions":${JSON.stringify(request.instructions)}`;
  json += `,"input":[${request.input.map(itemJson).join(',')}]`;
  json += `,"tools":${request.toolsJson ?? JSON.stringify(request.tools)}`;
  // Tool settings only with tools: some compatible servers refuse them on a tool-less request.
  if (request.tools.length > 0) json += `,"tool_choice":${JSON.stringify(request.toolChoice)},"parallel_tool_calls":true`;
  json += ',"store":false,"stream":true';
  if (options.includeEncryptedReasoning) json += ',"include":["reasoning.encrypted_content"]';
  return `${json}}`;
}

const itemTexts = new WeakMap<ConversationItem, string>();

function itemJson(item: ConversationItem): string {
  let text = itemTexts.get(item);
  if (text === undefined) {
    text = JSON.stringify(toResponsesItem(item));
    itemTexts.set(item, text);
  }
  return text;
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
