import type { JsonObject, JsonValue } from '../json.js';
import { stringifyWithOutputJson, takeOutputJson } from '../output-json.js';
import type { ConversationItem, FunctionCallOutputItem } from './model-client.js';

/**
 * A conversation item as the JSON text a Responses request carries it as: made the first time
 * the item is sent, and kept with it (items do not change once in the conversation), so that
 * the later requests of a turn, which carry the whole conversation again, do not serialise it
 * again (see encodeResponsesRequest).
 *
 * Kept as text, on V8's heap, not as UTF-8 bytes: a waiting turn's kept bytes were ~19 buffers
 * of malloc'd memory, each with its own ArrayBuffer, view and backing store, long-lived among
 * the short-lived buffers of the requests around them, so malloc could not give their pages
 * back; V8 compacts strings with the rest of its heap. Encoding happens once per request, when
 * the body is joined to be sent (see joinBody), and that buffer is let go once written.
 */
const itemTexts = new WeakMap<ConversationItem, string>();

export function itemJson(item: ConversationItem): string {
  let json = itemTexts.get(item);
  if (json === undefined) {
    // A tool's output comes with its JSON text made, for its event (see output-json.ts).
    json = stringifyWithOutputJson(toResponsesItem(item), takeOutputJson(item));
    itemTexts.set(item, json);
  }
  return json;
}

/**
 * A tool's text output as a conversation item kept only as the JSON text it is sent as
 * (`outputJson` is exactly `JSON.stringify(output)`).
 *
 * A plain item would keep the output's text beside its JSON: the same kilobytes twice for as
 * long as the turn waits on its model (the bench's eight file reads: 29 KB of text beside 30 KB
 * of JSON). This one reads its `output` back from the JSON on the rare occasions it is wanted
 * (a scripted model, a turn parked for approval). It is a plain object with an enumerable
 * getter, so it serialises, spreads, clones and compares as the plain item does.
 */
export function jsonOutputItem(callId: string, outputJson: string): FunctionCallOutputItem {
  // The field order toResponsesItem gives: the text is what JSON.stringify of the plain item makes.
  const json = `{"type":"function_call_output","call_id":${JSON.stringify(callId)},"output":${outputJson}}`;
  const item: FunctionCallOutputItem = {
    type: 'function_call_output',
    call_id: callId,
    get output(): string {
      return (JSON.parse(json) as { output: string }).output;
    },
  };
  itemTexts.set(item, json);
  return item;
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
