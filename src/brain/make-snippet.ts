import { isSingleCjkCharacter } from './search-terms.js';

/**
 * The part of a page's text, at most `maxChars` long, that holds the most distinct query
 * terms (then the most hits), with a little context before the first hit, whitespace
 * collapsed, and `…` where text was cut. Without any hit, the page's beginning.
 *
 * Made from the stored text rather than by the database (FTS5 `snippet`, `ts_headline`):
 * the index holds terms (bigrams for Chinese and Japanese), not the text a person reads.
 */
export function makeSnippet(options: { readonly text: string; readonly terms: readonly string[]; readonly maxChars: number }): string {
  const { text, maxChars } = options;
  if (text.length <= maxChars) return collapse(text);
  const lowered = text.toLowerCase();
  // Lower-casing may change the length of a few characters (`İ`); then offsets would not
  // line up with the text, so search case-sensitively instead.
  const haystack = lowered.length === text.length ? lowered : text;
  const hits = findHits(haystack, options.terms);
  if (hits.length === 0) return cut(text, 0, maxChars);

  let best = { start: 0, distinct: 0, count: 0 };
  let first = 0;
  const inWindow = new Map<number, number>();
  for (const hit of hits) {
    inWindow.set(hit.term, (inWindow.get(hit.term) ?? 0) + 1);
    while (hit.at + hit.length - (hits[first]?.at ?? 0) > maxChars) {
      const leaving = hits[first];
      first += 1;
      if (leaving === undefined) break;
      const left = (inWindow.get(leaving.term) ?? 1) - 1;
      if (left === 0) inWindow.delete(leaving.term);
      else inWindow.set(leaving.term, left);
    }
    const count = hit.index - first + 1;
    if (inWindow.size > best.distinct || (inWindow.size === best.distinct && count > best.count)) {
      best = { start: hits[first]?.at ?? 0, distinct: inWindow.size, count };
    }
  }
  // Some context before the first hit, up to a quarter of the window, from a word start.
  let start = Math.max(0, best.start - Math.floor(maxChars / 4));
  const space = text.slice(start, best.start).search(/\s/);
  if (start > 0 && space >= 0) start += space + 1;
  return cut(text, Math.min(start, Math.max(0, text.length - maxChars)), maxChars);
}

interface Hit {
  readonly at: number;
  readonly length: number;
  readonly term: number;
  readonly index: number;
}

const MAX_HITS_PER_TERM = 200;

function findHits(haystack: string, terms: readonly string[]): Hit[] {
  const found: Omit<Hit, 'index'>[] = [];
  terms.forEach((term, termIndex) => {
    if (term.length < 2 && !isSingleCjkCharacter(term)) return;
    let from = 0;
    for (let n = 0; n < MAX_HITS_PER_TERM; n += 1) {
      const at = haystack.indexOf(term, from);
      if (at < 0) break;
      found.push({ at, length: term.length, term: termIndex });
      from = at + term.length;
    }
  });
  found.sort((a, b) => a.at - b.at);
  return found.map((hit, index) => ({ ...hit, index }));
}

function cut(text: string, start: number, maxChars: number): string {
  let from = start;
  let to = Math.min(text.length, start + maxChars);
  // Never split a surrogate pair.
  if (from > 0 && isLowSurrogate(text.charCodeAt(from))) from += 1;
  if (to < text.length && isLowSurrogate(text.charCodeAt(to))) to -= 1;
  const body = collapse(text.slice(from, to));
  return `${from > 0 ? '…' : ''}${body}${to < text.length ? '…' : ''}`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function collapse(text: string): string {
  return text.replaceAll(/\s+/g, ' ').trim();
}
