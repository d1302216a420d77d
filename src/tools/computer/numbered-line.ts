/** Lines longer than this are cut when shown to the model. */
export const MAX_LINE_CHARS = 2000;

/**
 * One line as `cat -n` shows it: the 1-based number right-aligned in six columns, a tab,
 * then the text. read_file and edit_file both use it so the model sees one format.
 */
export function numberLine(lineNumber: number, text: string): string {
  return linePrefix(lineNumber) + text;
}

/** `lines` numbered from `firstLine` (see numberLine), one per line: what read_file shows. */
export function numberLines(lines: readonly string[], firstLine: number): string {
  // One join over the parts: the text is copied once, with no string per numbered line.
  const parts = new Array<string>(2 * lines.length);
  for (let index = 0; index < lines.length; index += 1) {
    parts[2 * index] = index === 0 ? linePrefix(firstLine) : followingLinePrefix(firstLine + index);
    parts[2 * index + 1] = lines[index] ?? '';
  }
  return parts.join('');
}

/** The width of a line's number column: six, or more for a number of more digits. */
export function lineNumberWidth(lineNumber: number): number {
  return lineNumber < 1_000_000 ? 6 : String(lineNumber).length;
}

/*
 * The number column and tab of the first lines, made once: every read shows line 1 onwards,
 * and three strings per line (the number, its padding, the joined line) were a good share of
 * what a read allocated.
 */
const CACHED_PREFIXES = 4096;
const prefixes: string[] = [];
const followingPrefixes: string[] = [];

function linePrefix(lineNumber: number): string {
  if (lineNumber >= CACHED_PREFIXES) return `${String(lineNumber).padStart(6)}\t`;
  return (prefixes[lineNumber] ??= `${String(lineNumber).padStart(6)}\t`);
}

/** The line's prefix after the newline that ends the line before it. */
function followingLinePrefix(lineNumber: number): string {
  if (lineNumber >= CACHED_PREFIXES) return `\n${linePrefix(lineNumber)}`;
  return (followingPrefixes[lineNumber] ??= `\n${linePrefix(lineNumber)}`);
}

/**
 * Cuts `text` to MAX_LINE_CHARS with a marker saying how long the line really is;
 * `fullLength` is the whole line's length when `text` holds only its start.
 */
export function cutLongLine(text: string, fullLength = text.length): { text: string; cut: boolean } {
  if (fullLength <= MAX_LINE_CHARS) return { text, cut: false };
  let kept = text.slice(0, MAX_LINE_CHARS);
  // Never leave half of a surrogate pair at the cut.
  const last = kept.charCodeAt(kept.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) kept = kept.slice(0, -1);
  return { text: `${kept} … [line cut: ${fullLength} characters in all]`, cut: true };
}
