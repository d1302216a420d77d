const ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Escapes raw line feeds, carriage returns and tabs inside JSON strings, and nothing else:
 * models often write code into a string with real line breaks, which JSON forbids. Outside
 * strings these characters are whitespace and stay as they are; every other control character
 * is left for the parser to refuse. String-aware in the same way as `scanJson` (escapes are
 * honoured, an unterminated string runs to the end). `changed` says whether anything was escaped.
 */
export function escapeRawControls(text: string): { readonly text: string; readonly changed: boolean } {
  let result = '';
  let copiedUpTo = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charAt(index);
    if (!inString) {
      if (char === '"') inString = true;
      continue;
    }
    if (char === '\\') {
      index += 1;
    } else if (char === '"') {
      inString = false;
    } else {
      const escape = ESCAPES[char];
      if (escape !== undefined) {
        result += text.slice(copiedUpTo, index) + escape;
        copiedUpTo = index + 1;
      }
    }
  }
  if (copiedUpTo === 0) return { text, changed: false };
  return { text: result + text.slice(copiedUpTo), changed: true };
}
