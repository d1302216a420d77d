import type { JsonObject, JsonValue } from '../json.js';
import { stringifyWithOutputJson, takeOutputJson } from '../output-json.js';
import { KeptItemText, MIN_DEFLATED_CHARS } from './kept-item-text.js';
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
 * the body is joined to be sent (see joinText), and that text is let go once written. A long
 * text is deflated while its turn waits on the model (see KeptItemText).
 */
const itemTexts = new WeakMap<ConversationItem, string | KeptItemText>();

/** Keeps an item's JSON text: a short one as it is, a long one in a KeptItemText, which may deflate it. */
function keep(item: ConversationItem, json: string): string | KeptItemText {
  const kept = json.length < MIN_DEFLATED_CHARS ? json : new KeptItemText(json);
  itemTexts.set(item, kept);
  return kept;
}

/** The item's kept JSON text, made (and kept) the first time it is asked for. */
function keptText(item: ConversationItem): string | KeptItemText {
  let kept = itemTexts.get(item);
  if (kept === undefined) {
    // A tool's output comes with its JSON text made, for its event (see output-json.ts).
    const json = stringifyWithOutputJson(toResponsesItem(item), takeOutputJson(item));
    kept = keep(item, json);
  }
  return kept;
}

/** The item's JSON text: what `JSON.stringify(toResponsesItem(item))` makes. */
export function itemJson(item: ConversationItem): string {
  const kept = keptText(item);
  return typeof kept === 'string' ? kept : kept.text();
}

/** Deflates the kept texts of these items that are long enough to pay (see KeptItemText); items never sent have none yet. */
export function deflateItemTexts(items: readonly ConversationItem[]): void {
  for (const item of items) {
    const kept = itemTexts.get(item);
    if (kept !== undefined && typeof kept !== 'string') kept.deflate();
  }
}

/** True when the item's text is kept deflated (see KeptItemText): for the tests, and for anyone asking what a turn holds. */
export function isItemTextDeflated(item: ConversationItem): boolean {
  const kept = itemTexts.get(item);
  return kept !== undefined && typeof kept !== 'string' && kept.isDeflated;
}

/** A JSON output item's `output`, read back from its kept text (one function for every such item). */
function readOutput(this: FunctionCallOutputItem): string {
  return (JSON.parse(itemJson(this)) as { output: string }).output;
}

/**
 * A tool's text output as a conversation item kept only as the JSON text it is sent as
 * (`outputJson` is exactly `JSON.stringify(output)`).
 *
 * A plain item would keep the output's text beside its JSON: the same kilobytes twice for as
 * long as the turn waits on its model (the bench's eight file reads: 29 KB of text beside 30 KB
 * of JSON). This one reads its `output` back from the kept text on the rare occasions it is
 * wanted (a scripted model, a turn parked for approval). It is a plain object with an enumerable
 * getter, so it serialises, spreads, clones and compares as the plain item does.
 */
export function jsonOutputItem(callId: string, outputJson: string): FunctionCallOutputItem {
  // The field order toResponsesItem gives: the text is what JSON.stringify of the plain item makes.
  const json = `{"type":"function_call_output","call_id":${JSON.stringify(callId)},"output":${outputJson}}`;
  const item = { type: 'function_call_output', call_id: callId } as FunctionCallOutputItem;
  Object.defineProperty(item, 'output', { get: readOutput, enumerable: true, configurable: true });
  keep(item, json);
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
