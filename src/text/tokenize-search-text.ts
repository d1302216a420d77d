/** Letters, marks and digits beyond ASCII; tested one character at a time, and only for non-ASCII text. */
const WORD_CHARACTER = /^[\p{L}\p{M}\p{N}]$/u;
/**
 * The parts of a cased non-ASCII word: an acronym not followed by a lower-case letter, a
 * capitalised or lower-case word, a number, or a run of uncased letters.
 */
const WORD_PART = /\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+\p{M}*|\p{N}+|[\p{L}\p{M}]+/gu;
/** Anything outside tab … tilde: only such text needs NFKC (full-width forms, composed accents). */
const NON_ASCII = /[^\t-~]/;

const SEPARATOR = 0;
const WORD = 1;
const CJK = 2;

/**
 * Splits text into search terms, the same way for tool definitions and for queries:
 *
 * - NFKC first, so full-width `ｃａｌｅｎｄａｒ` and `calendar` are the same word;
 * - `snake_case`, `kebab-case`, `dotted.names` and `camelCase` split into their words,
 *   lower-cased (`listCalendarEvents` → `list`, `calendar`, `event`; `HTTPServer` → `http`,
 *   `server`);
 * - English plurals folded with Harman's S-stemmer (`events` → `event`, `queries` → `query`),
 *   so a query and a description need not agree on number;
 * - Han, Hiragana, Katakana and Hangul runs become overlapping character bigrams
 *   (`创建日程` → `创建`, `建日`, `日程`), the usual dictionary-free way to index text written
 *   without spaces; a lone CJK character stays a term.
 *
 * A hand-written scanner rather than Unicode-property regular expressions: those cost about
 * a microsecond per call on short strings, and building the index of 2,000 tools tokenizes
 * some 10,000 strings.
 */
export function tokenizeSearchText(text: string): string[] {
  const source = NON_ASCII.test(text) ? text.normalize('NFKC') : text;
  const terms: string[] = [];
  let index = 0;
  while (index < source.length) {
    const kind = classify(source, index);
    if (kind === SEPARATOR) {
      index += characterWidth(source, index);
      continue;
    }
    const start = index;
    let ascii = true;
    while (index < source.length && classify(source, index) === kind) {
      if (source.charCodeAt(index) > 0x7f) ascii = false;
      index += characterWidth(source, index);
    }
    const run = source.slice(start, index);
    if (kind === CJK) addBigrams(run, terms);
    else if (ascii) addAsciiWordParts(run, terms);
    else addWordParts(run, terms);
  }
  return terms;
}

function classify(text: string, index: number): number {
  const code = text.codePointAt(index) ?? 0;
  if (code < 0x80) {
    return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) ? WORD : SEPARATOR;
  }
  if (isCjk(code)) return CJK;
  return WORD_CHARACTER.test(String.fromCodePoint(code)) ? WORD : SEPARATOR;
}

/** Han (with extensions and compatibility ideographs), Hiragana, Katakana, the prolonged sound mark, Hangul. */
function isCjk(code: number): boolean {
  return (
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x20000 && code <= 0x323af) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0x3040 && code <= 0x30ff) ||
    (code >= 0x31f0 && code <= 0x31ff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0x1100 && code <= 0x11ff) ||
    (code >= 0x3130 && code <= 0x318f)
  );
}

function characterWidth(text: string, index: number): number {
  return (text.codePointAt(index) ?? 0) > 0xffff ? 2 : 1;
}

const isUpper = (code: number): boolean => code >= 0x41 && code <= 0x5a;
const isLower = (code: number): boolean => code >= 0x61 && code <= 0x7a;
const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39;

/** `createHTTPServer2` → `create`, `http`, `server`, `2`: the ASCII case of `WORD_PART`. */
function addAsciiWordParts(word: string, terms: string[]): void {
  let start = 0;
  while (start < word.length) {
    const code = word.charCodeAt(start);
    let end = start + 1;
    if (isDigit(code)) {
      while (end < word.length && isDigit(word.charCodeAt(end))) end += 1;
    } else if (isUpper(code)) {
      while (end < word.length && isUpper(word.charCodeAt(end))) end += 1;
      if (end < word.length && isLower(word.charCodeAt(end))) {
        // The last capital starts the next word: `HTTPServer` → `HTTP` + `Server`.
        if (end - 1 > start) addTerm(word.slice(start, end - 1), terms);
        start = end - 1;
        while (end < word.length && isLower(word.charCodeAt(end))) end += 1;
      }
    } else {
      while (end < word.length && isLower(word.charCodeAt(end))) end += 1;
    }
    addTerm(word.slice(start, end), terms);
    start = end;
  }
}

function addWordParts(word: string, terms: string[]): void {
  for (const part of word.matchAll(WORD_PART)) addTerm(part[0], terms);
}

function addTerm(part: string, terms: string[]): void {
  const lower = part.toLowerCase();
  terms.push(/^[a-z]{4,}$/.test(lower) ? stemPlural(lower) : lower);
}

function addBigrams(run: string, terms: string[]): void {
  const characters = Array.from(run);
  if (characters.length === 1) {
    terms.push(run);
    return;
  }
  for (let index = 0; index + 1 < characters.length; index += 1) {
    terms.push(`${characters[index] ?? ''}${characters[index + 1] ?? ''}`);
  }
}

/** Harman (1991): `-ies` → `-y`, `-es` → `-e`, `-s` → ``, except where that would cut `status`, `class`, `shoes`. */
function stemPlural(word: string): string {
  if (word.endsWith('ies') && !word.endsWith('eies') && !word.endsWith('aies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('es') && !word.endsWith('aes') && !word.endsWith('ees') && !word.endsWith('oes')) return word.slice(0, -1);
  if (word.endsWith('s') && !word.endsWith('us') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}
