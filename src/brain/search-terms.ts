import { tokenizeSearchText } from '../text/tokenize-search-text.js';
import { BRAIN_LIMITS } from './brain-page.js';

/**
 * The terms a query searches for: the same tokenizer as the index (NFKC, lower case, English
 * words split and their plurals folded, Han / Kana / Hangul as overlapping bigrams), each term
 * once, at most `BRAIN_LIMITS.queryTerms`.
 */
export function toSearchTerms(query: string): string[] {
  return [...new Set(tokenizeSearchText(query))].slice(0, BRAIN_LIMITS.queryTerms);
}

/**
 * What a search looks for: any of `terms`, and, ranked above, the `phrases` — the bigrams of
 * each Chinese or Japanese run of three or more characters in a row, which only a page holding
 * that run finds (`パスワード` as a phrase, not just any page with `ワー` in its title).
 */
export interface SearchQuery {
  readonly terms: readonly string[];
  readonly phrases: readonly (readonly string[])[];
}

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]{3,}/gu;
const MAX_PHRASES = 8;

export function toSearchQuery(query: string): SearchQuery {
  const phrases = [...query.normalize('NFKC').matchAll(CJK_RUN)].map((run) => tokenizeSearchText(run[0])).filter((bigrams) => bigrams.length >= 2);
  const unique = [...new Map(phrases.map((phrase) => [phrase.join(' '), phrase])).values()];
  return { terms: toSearchTerms(query), phrases: unique.slice(0, MAX_PHRASES).map((phrase) => phrase.slice(0, BRAIN_LIMITS.queryTerms)) };
}

/**
 * Text as the full-text index receives it: the terms joined by spaces. Both databases split
 * on spaces only, so a Chinese or Japanese run becomes its bigrams there too; their own English
 * stemmers (porter, Snowball) then see whole English words.
 */
export function toIndexText(text: string): string {
  return tokenizeSearchText(text).join(' ');
}

/**
 * True for a term that is one CJK character: the index holds bigrams, so it is searched as a
 * prefix (`价` finds `价格`); a character that only ends a run is not found that way.
 */
export function isSingleCjkCharacter(term: string): boolean {
  const characters = Array.from(term);
  return characters.length === 1 && /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]/u.test(term);
}
