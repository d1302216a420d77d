import { jsonrepair } from 'jsonrepair';
import { escapeRawControls } from './escape-raw-controls.js';
import { findBalancedObjectEnd, scanJson, type JsonScan, type JsonToken } from './scan-json.js';

/** Arguments larger than this are refused outright. */
export const MAX_ARGUMENT_BYTES = 256 * 1024;
/** Arguments larger than this are parsed strictly, never repaired. */
export const MAX_REPAIR_BYTES = 64 * 1024;

/**
 * The rung of the repair ladder that produced the arguments; `none` when they parsed as sent.
 * When a fence was stripped and the inner text repaired further, the higher rung is recorded
 * (in this order: code fence, balanced object, escaped control characters, closed containers).
 */
export type RepairRung = 'none' | 'empty_object' | 'code_fence' | 'balanced_object' | 'escaped_control_characters' | 'closed_containers';

export type ParsedArguments =
  | { readonly ok: true; readonly value: unknown; readonly repair: RepairRung }
  | { readonly ok: false; readonly problem: string };

const RUNG_ORDER: readonly RepairRung[] = ['none', 'empty_object', 'code_fence', 'balanced_object', 'escaped_control_characters', 'closed_containers'];

const WHOLE_FENCE = /^\s*```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?[ \t]*```\s*$/;

/**
 * Decodes a function call's argument string with a bounded repair ladder: strict parse →
 * strip a code fence wrapping the whole string → the first balanced `{…}` → escape raw line
 * feeds, carriage returns and tabs inside strings → close unbalanced containers and drop
 * trailing commas. It fixes syntax only, and gives up rather than guess
 * when the text was cut inside a string, a number or a literal, or before a value: the
 * missing suffix could change what the call does.
 */
export function parseArgumentsJson(raw: string, options: { acceptsEmpty: () => boolean }): ParsedArguments {
  const bytes = Buffer.byteLength(raw, 'utf8');
  if (bytes > MAX_ARGUMENT_BYTES) {
    return { ok: false, problem: `the arguments are ${formatKiB(bytes)}, over the ${formatKiB(MAX_ARGUMENT_BYTES)} limit` };
  }
  if (raw.trim() === '') {
    return options.acceptsEmpty()
      ? { ok: true, value: {}, repair: 'empty_object' }
      : { ok: false, problem: 'the arguments are empty; send a JSON object with the required parameters' };
  }
  const strict = tryParse(raw);
  if (strict.ok) return { ok: true, value: strict.value, repair: 'none' };
  if (bytes > MAX_REPAIR_BYTES) {
    return { ok: false, problem: `the arguments are not valid JSON (${strict.message}), and at ${formatKiB(bytes)} they are too large to repair` };
  }

  const fence = WHOLE_FENCE.exec(raw);
  // Raw line breaks and tabs inside strings are escaped once, up front: every later rung then
  // works on text where they are legal, and the escape is recorded when it was needed.
  const escaped = escapeRawControls(fence?.[1] ?? raw);
  const body = escaped.text;
  const atLeast = (rung: RepairRung): RepairRung => (escaped.changed && RUNG_ORDER.indexOf(rung) < RUNG_ORDER.indexOf('escaped_control_characters') ? 'escaped_control_characters' : rung);
  if (fence !== null || escaped.changed) {
    const inner = tryParse(body);
    if (inner.ok) return { ok: true, value: inner.value, repair: atLeast(fence === null ? 'escaped_control_characters' : 'code_fence') };
  }

  const scan = scanJson(body);
  const open = scan.tokens.findIndex((token) => token.kind === '{');
  const firstOpen = scan.tokens[open];
  if (firstOpen === undefined) {
    return { ok: false, problem: `the arguments are not a JSON object (${strict.message})` };
  }
  const end = findBalancedObjectEnd(scan.tokens, open);
  if (end !== undefined && scan.tokens.some((token) => token.kind === '{' && token.start >= end)) {
    // Two objects where one was expected: most likely two calls run together. Taking the
    // first would silently drop the second, so say so instead.
    return { ok: false, problem: 'the arguments hold more than one JSON object; make one call per object' };
  }
  if (end !== undefined) {
    const balanced = tryParse(body.slice(firstOpen.start, end));
    if (balanced.ok) return { ok: true, value: balanced.value, repair: atLeast('balanced_object') };
  }

  const candidate = end === undefined ? body.slice(firstOpen.start) : body.slice(firstOpen.start, end);
  // A closing fence proves the model finished writing: a final number there is complete.
  const closed = closeContainers(candidate, { finished: fence !== null });
  if (!closed.ok) return closed;
  return { ok: true, value: closed.value, repair: 'closed_containers' };
}

function closeContainers(text: string, options: { finished: boolean }): ParsedArguments {
  const scan = scanJson(text);
  const refusal = truncationProblem(scan, options.finished);
  if (refusal !== undefined) return { ok: false, problem: refusal };
  let repaired: string;
  try {
    repaired = jsonrepair(text);
  } catch (error) {
    return { ok: false, problem: `the arguments are not valid JSON and could not be repaired (${errorMessage(error)})` };
  }
  // jsonrepair can do far more than this rung allows (quote fixes, dropped "...", comments).
  // Accept its output only when it differs from the input by commas and closing brackets.
  if (!onlyClosedOrCommas(scan.tokens, scanJson(repaired).tokens)) {
    return { ok: false, problem: 'the arguments are not valid JSON, and repairing them would change more than closing brackets and commas' };
  }
  const parsed = tryParse(repaired);
  return parsed.ok
    ? { ok: true, value: parsed.value, repair: 'closed_containers' }
    : { ok: false, problem: `the arguments are not valid JSON (${parsed.message})` };
}

/** Why the text cannot be closed safely, if it cannot. */
function truncationProblem(scan: JsonScan, finished: boolean): string | undefined {
  if (scan.endsInString) return 'the arguments were cut off inside a string; send the complete JSON object again';
  const significant = scan.tokens.filter((token) => token.kind !== ',');
  const last = significant.at(-1);
  if (last === undefined) return 'the arguments are empty';
  const lastRaw = scan.tokens.at(-1);
  if (lastRaw?.kind === 'value' && !finished && !scan.endsWithWhitespace && depthAtEnd(scan.tokens) > 0) {
    return `the arguments were cut off inside the value "${last.text}"; send the complete JSON object again`;
  }
  if (last.kind === ':') return 'the arguments were cut off before a value; send the complete JSON object again';
  if (lastRaw?.kind === ',' && !finished && depthAtEnd(scan.tokens) > 0) {
    // A comma with nothing after it: more members were on their way.
    return 'the arguments were cut off after a comma; send the complete JSON object again';
  }
  if (last.kind === 'string' && isObjectKeyPosition(significant, significant.length - 1)) {
    return `the arguments were cut off after the key ${last.text}; send the complete JSON object again`;
  }
  return undefined;
}

function depthAtEnd(tokens: readonly JsonToken[]): number {
  let depth = 0;
  for (const token of tokens) {
    if (token.kind === '{' || token.kind === '[') depth += 1;
    else if (token.kind === '}' || token.kind === ']') depth -= 1;
  }
  return depth;
}

/** With commas set aside, a string inside an object that does not follow `:` is a key. */
function isObjectKeyPosition(significant: readonly JsonToken[], index: number): boolean {
  const stack: string[] = [];
  for (const token of significant.slice(0, index)) {
    if (token.kind === '{' || token.kind === '[') stack.push(token.kind);
    else if (token.kind === '}' || token.kind === ']') stack.pop();
  }
  return stack.at(-1) === '{' && significant[index - 1]?.kind !== ':';
}

function onlyClosedOrCommas(before: readonly JsonToken[], after: readonly JsonToken[]): boolean {
  const original = before.filter((token) => token.kind !== ',');
  const repaired = after.filter((token) => token.kind !== ',');
  if (repaired.length < original.length) return false;
  for (let index = 0; index < original.length; index += 1) {
    if (original[index]?.text !== repaired[index]?.text) return false;
  }
  return repaired.slice(original.length).every((token) => token.kind === '}' || token.kind === ']');
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: errorMessage(error) };
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function formatKiB(bytes: number): string {
  return `${Math.ceil(bytes / 1024)} KiB`;
}
