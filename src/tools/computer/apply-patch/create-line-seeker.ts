/**
 * The comparisons tried in turn, strictest first, as Codex's `seek_sequence` does: exact,
 * then ignoring trailing whitespace, then ignoring whitespace on both sides, then also
 * reading typographic dashes, quotes and odd spaces as their ASCII forms. A looser pass runs
 * only when every stricter one found nothing anywhere, so an exact match always wins.
 */
const PASSES: readonly ((line: string) => string)[] = [
  (line) => line,
  (line) => line.trimEnd(),
  (line) => line.trim(),
  (line) => normalizePunctuation(line.trim()),
];

/**
 * Finds where `pattern` occurs as consecutive lines, starting the search at `from`. With
 * `atEnd` the pattern must be the last lines (a hunk marked `*** End of File`). Returns the
 * index of the first matching line, or undefined.
 */
export type LineSeeker = (options: { pattern: readonly string[]; from: number; atEnd?: boolean }) => number | undefined;

interface PassIndex {
  readonly lines: readonly string[];
  /** Where each normalized line occurs, ascending: only those places can start a match. */
  readonly positions: ReadonlyMap<string, readonly number[]>;
}

/**
 * A `LineSeeker` over a file's lines. Each pass's normalized copy of the file, and an index
 * of where each line occurs, is made once, when first needed, not once per hunk; a search
 * then only tries the places where the pattern's first line occurs, so a patch with many
 * hunks stays fast on a large file.
 */
export function createLineSeeker(lines: readonly string[]): LineSeeker {
  const indexes: (PassIndex | undefined)[] = PASSES.map(() => undefined);
  const indexFor = (pass: number, normalize: (line: string) => string): PassIndex => {
    const cached = indexes[pass];
    if (cached !== undefined) return cached;
    const normalized = pass === 0 ? lines : lines.map(normalize);
    const positions = new Map<string, number[]>();
    normalized.forEach((line, position) => {
      const list = positions.get(line);
      if (list === undefined) positions.set(line, [position]);
      else list.push(position);
    });
    const built = { lines: normalized, positions };
    indexes[pass] = built;
    return built;
  };
  return ({ pattern, from, atEnd = false }) => {
    if (pattern.length === 0) return atEnd ? lines.length : from;
    const lastStart = lines.length - pattern.length;
    if (lastStart < from) return undefined;
    const firstStart = atEnd ? lastStart : from;
    for (const [pass, normalize] of PASSES.entries()) {
      const index = indexFor(pass, normalize);
      const wanted = pattern.map(normalize);
      const starts = index.positions.get(wanted[0] ?? '') ?? [];
      for (let at = firstAtLeast(starts, firstStart); at < starts.length; at += 1) {
        const start = starts[at] ?? lastStart + 1;
        if (start > lastStart) break;
        if (matchesAt(index.lines, wanted, start)) return start;
      }
    }
    return undefined;
  };
}

/** The index of the first value in an ascending list that is at least `minimum`. */
function firstAtLeast(values: readonly number[], minimum: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((values[middle] ?? minimum) < minimum) low = middle + 1;
    else high = middle;
  }
  return low;
}

function matchesAt(lines: readonly string[], pattern: readonly string[], start: number): boolean {
  for (let offset = 0; offset < pattern.length; offset += 1) {
    if (lines[start + offset] !== pattern[offset]) return false;
  }
  return true;
}

const DASHES = /[\u2010-\u2015\u2212]/g;
const SINGLE_QUOTES = /[\u2018-\u201B]/g;
const DOUBLE_QUOTES = /[\u201C-\u201F]/g;
const ODD_SPACES = /[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g;

function normalizePunctuation(line: string): string {
  return line.replace(DASHES, '-').replace(SINGLE_QUOTES, "'").replace(DOUBLE_QUOTES, '"').replace(ODD_SPACES, ' ');
}
