import type { JsonObject } from '../../json.js';

/** A provider tool list as objects and as its exact JSON text. */
export interface SharedToolList {
  readonly tools: readonly JsonObject[];
  readonly json: string;
}

/** Lists kept; past this many the memory starts over. */
const MAX_LISTS = 64;
const lists = new Map<string, SharedToolList>();

/**
 * One copy of each provider tool list in the process. Nearly every turn of a deployment shows
 * one of a handful of lists, each some kilobytes of JSON that the turn holds until it ends (its
 * catalog answers every model call with it) and that the store keys its tool sets by. The
 * turn's freshly joined text is exchanged for the shared one: a thousand waiting turns hold
 * one list, not a thousand, and the shared string's hash, which every lookup by it needs, is
 * computed once. The arrays are frozen: no turn can change what another shows.
 */
export function sharedToolList(tools: readonly JsonObject[], json: string): SharedToolList {
  const known = lists.get(json);
  if (known !== undefined) return known;
  const list: SharedToolList = { tools: Object.freeze([...tools]), json };
  if (lists.size >= MAX_LISTS) lists.clear();
  lists.set(json, list);
  return list;
}
