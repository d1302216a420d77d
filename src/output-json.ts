import { randomUUID } from 'node:crypto';

/**
 * A tool's output is one text in two JSON documents: its `tool.completed` event (stored and
 * streamed) and the `function_call_output` item of every later model request. Escaping it is
 * most of the cost of either (a 3.4 KB file read took 17 µs to stringify here, eight of them in
 * a turn of the bench), so its JSON text is made once, kept with each object that carries it in
 * an `output` field until that object is serialised, and put in place then.
 */
const outputJson = new WeakMap<object, string>();

/** Notes that `holder.output`'s JSON text is `json` (exactly `JSON.stringify(holder.output)`); returns `holder`. */
export function withOutputJson<T extends { readonly output: unknown }>(holder: T, json: string): T {
  outputJson.set(holder, json);
  return holder;
}

/**
 * The JSON text noted for `holder.output`, if any, forgotten as it is taken: it is wanted once,
 * when the holder is serialised, and a conversation item lives as long as its turn (eight file
 * reads would keep 28 KB of escaped text in each waiting turn).
 */
export function takeOutputJson(holder: object): string | undefined {
  const json = outputJson.get(holder);
  if (json !== undefined) outputJson.delete(holder);
  return json;
}

/**
 * A stand-in no field can hold by chance: random per process, and starting with a character
 * JSON escapes. The output is serialised as this, and its JSON text then spliced in its place.
 */
const STAND_IN = `\u0000${randomUUID()}`;
const STAND_IN_JSON = JSON.stringify(STAND_IN);

/**
 * `JSON.stringify(value)`, with `value.output` written as `json` (its known JSON text) rather
 * than serialised again; the field keeps its place among the others. Without an `output`
 * field, or with no known text, this is `JSON.stringify(value)`.
 */
export function stringifyWithOutputJson(value: object, json: string | undefined): string {
  if (json === undefined || !('output' in value)) return JSON.stringify(value);
  const text = JSON.stringify({ ...value, output: STAND_IN });
  const at = text.indexOf(STAND_IN_JSON);
  return `${text.slice(0, at)}${json}${text.slice(at + STAND_IN_JSON.length)}`;
}
