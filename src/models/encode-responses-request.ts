import { itemJson } from './item-json.js';
import type { ModelRequest } from './model-client.js';

/**
 * A Responses request body as the pieces of the text `JSON.stringify` would make of it, each
 * serialised once, not on every model call.
 *
 * Every request carries the whole conversation and the whole tool list (`store: false`), so a
 * turn of three model calls would otherwise serialise its first items three times and its
 * tool list (kilobytes of schemas) once per call. Here each conversation item's JSON is made
 * the first time the item is sent, and kept with the item (see itemJson); the tool list comes
 * as the catalog's own text; and the body is those pieces, written into
 * one string only as the request goes out (joinText; joinBody makes bytes, for other fetches).
 */
export function encodeResponsesRequest(options: { readonly model: string; readonly request: ModelRequest; readonly includeEncryptedReasoning: boolean }): EncodedBody {
  const { model, request } = options;
  let head = `{"model":${JSON.stringify(model)}`;
  if (request.instructions !== undefined) head += `,"instructions":${JSON.stringify(request.instructions)}`;
  const pieces: string[] = [`${head},"input":[`];
  request.input.forEach((item, index) => {
    if (index > 0) pieces.push(',');
    pieces.push(itemJson(item));
  });
  pieces.push('],"tools":', request.toolsJson ?? JSON.stringify(request.tools));
  let tail = '';
  // Tool settings only with tools: some compatible servers refuse them on a tool-less request.
  if (request.tools.length > 0) tail += `,"tool_choice":${JSON.stringify(request.toolChoice)},"parallel_tool_calls":true`;
  tail += ',"store":false,"stream":true';
  if (options.includeEncryptedReasoning) tail += ',"include":["reasoning.encrypted_content"]';
  pieces.push(`${tail}}`);
  let byteLength = 0;
  for (const piece of pieces) byteLength += Buffer.byteLength(piece);
  return { pieces, byteLength };
}

/** The body as one buffer, for the moment it is written (nothing else keeps it). */
export function joinBody(body: EncodedBody): Buffer {
  const joined = Buffer.allocUnsafeSlow(body.byteLength);
  let at = 0;
  for (const piece of body.pieces) at += joined.write(piece, at);
  return joined;
}

/**
 * The body as one string, for a socket to write: Node encodes a string into memory it frees as
 * soon as the write is done, where a joined buffer waits for V8 to collect it. Its UTF-8 is
 * what joinBody makes, `byteLength` bytes.
 */
export function joinText(body: EncodedBody): string {
  return body.pieces.join('');
}

/**
 * A body as the pieces it is made of, in order: they are joined only when it is sent (see
 * providerRequestBody), so that a turn waiting on its model holds no copy of its conversation
 * beyond the pieces its items keep anyway.
 */
export interface EncodedBody {
  /** JSON text. */
  readonly pieces: readonly string[];
  readonly byteLength: number;
}
