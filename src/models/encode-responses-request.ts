import { itemPiece } from './item-json.js';
import type { ModelRequest } from './model-client.js';

/**
 * A Responses request body as the pieces of the text `JSON.stringify` would make of it, each
 * serialised once, not on every model call.
 *
 * Every request carries the whole conversation and the whole tool list (`store: false`), so a
 * turn of three model calls would otherwise serialise its first items three times and its
 * tool list (kilobytes of schemas) once per call. Here each conversation item's JSON is made
 * the first time the item is sent, and kept with the item (see itemPiece); the tool list comes
 * as the catalog's own text, encoded once per list; and the body is those pieces, written into
 * one buffer only as the request goes out (joinBody).
 */
export function encodeResponsesRequest(options: { readonly model: string; readonly request: ModelRequest; readonly includeEncryptedReasoning: boolean }): EncodedBody {
  const { model, request } = options;
  let head = `{"model":${JSON.stringify(model)}`;
  if (request.instructions !== undefined) head += `,"instructions":${JSON.stringify(request.instructions)}`;
  const pieces: (string | Uint8Array)[] = [`${head},"input":[`];
  request.input.forEach((item, index) => {
    if (index > 0) pieces.push(',');
    pieces.push(itemPiece(item));
  });
  pieces.push('],"tools":', request.toolsJson === undefined ? JSON.stringify(request.tools) : toolListBytes(request.toolsJson));
  let tail = '';
  // Tool settings only with tools: some compatible servers refuse them on a tool-less request.
  if (request.tools.length > 0) tail += `,"tool_choice":${JSON.stringify(request.toolChoice)},"parallel_tool_calls":true`;
  tail += ',"store":false,"stream":true';
  if (options.includeEncryptedReasoning) tail += ',"include":["reasoning.encrypted_content"]';
  pieces.push(`${tail}}`);
  let byteLength = 0;
  for (const piece of pieces) byteLength += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.byteLength;
  return { pieces, byteLength };
}

/** The body as one buffer, for the moment it is written (nothing else keeps it). */
export function joinBody(body: EncodedBody): Buffer {
  const joined = Buffer.allocUnsafeSlow(body.byteLength);
  let at = 0;
  for (const piece of body.pieces) {
    if (typeof piece === 'string') at += joined.write(piece, at);
    else {
      joined.set(piece, at);
      at += piece.byteLength;
    }
  }
  return joined;
}

/**
 * A body as the pieces it is made of, in order: they are joined only when it is sent (see
 * providerRequestBody), so that a turn waiting on its model holds no copy of its conversation
 * beyond the pieces its items keep anyway.
 */
export interface EncodedBody {
  /** JSON text, the tool list's shared bytes, and the inflated bytes of deflated items. */
  readonly pieces: readonly (string | Uint8Array)[];
  readonly byteLength: number;
}

/** A tool list's bytes have a buffer of their own: a small `Buffer.from` is a slice of a shared 8 KiB pool, kept alive with it. */
const encoder = new TextEncoder();

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
