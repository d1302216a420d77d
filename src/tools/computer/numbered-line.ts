/** Lines longer than this are cut when shown to the model. */
export const MAX_LINE_CHARS = 2000;

/**
 * One line as `cat -n` shows it: the 1-based number right-aligned in six columns, a tab,
 * then the text. read_file and edit_file both use it so the model sees one format.
 */
export function numberLine(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(6)}\t${text}`;
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
