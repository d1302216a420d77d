/** A lexical token of JSON-like text. `value` covers numbers, literals and bare words. */
export interface JsonToken {
  readonly kind: '{' | '}' | '[' | ']' | ':' | ',' | 'string' | 'value';
  readonly text: string;
  readonly start: number;
}

export interface JsonScan {
  readonly tokens: readonly JsonToken[];
  /** The text ended inside an unterminated string. */
  readonly endsInString: boolean;
  /** The text ended with whitespace (so a final number or literal is complete). */
  readonly endsWithWhitespace: boolean;
}

const PUNCTUATION = new Set(['{', '}', '[', ']', ':', ',']);
const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * Splits JSON-like text into tokens, string-aware (braces inside strings are text, escapes are
 * honoured). It never fails: anything unexpected becomes a `value` token, so callers can reason
 * about how text ends even when it is broken.
 */
export function scanJson(text: string): JsonScan {
  const tokens: JsonToken[] = [];
  let index = 0;
  while (index < text.length) {
    const char = text.charAt(index);
    if (WHITESPACE.has(char)) {
      index += 1;
    } else if (PUNCTUATION.has(char)) {
      tokens.push({ kind: char as JsonToken['kind'], text: char, start: index });
      index += 1;
    } else if (char === '"') {
      const start = index;
      index += 1;
      let closed = false;
      while (index < text.length) {
        const inner = text.charAt(index);
        if (inner === '\\') {
          index += 2;
        } else if (inner === '"') {
          index += 1;
          closed = true;
          break;
        } else {
          index += 1;
        }
      }
      if (!closed) return { tokens, endsInString: true, endsWithWhitespace: false };
      tokens.push({ kind: 'string', text: text.slice(start, index), start });
    } else {
      const start = index;
      while (index < text.length && !PUNCTUATION.has(text.charAt(index)) && !WHITESPACE.has(text.charAt(index)) && text.charAt(index) !== '"') {
        index += 1;
      }
      tokens.push({ kind: 'value', text: text.slice(start, index), start });
    }
  }
  return { tokens, endsInString: false, endsWithWhitespace: text.length > 0 && WHITESPACE.has(text.charAt(text.length - 1)) };
}

/**
 * The end index (exclusive) of the balanced `{…}` that opens at `start`, or undefined when the
 * text ends before it closes. String-aware, so `"}"` inside a value does not count.
 */
export function findBalancedObjectEnd(tokens: readonly JsonToken[], startToken: number): number | undefined {
  let depth = 0;
  for (let index = startToken; index < tokens.length; index += 1) {
    const token = tokens[index];
    if (token === undefined) break;
    if (token.kind === '{' || token.kind === '[') depth += 1;
    else if (token.kind === '}' || token.kind === ']') {
      depth -= 1;
      if (depth === 0) return token.start + 1;
      if (depth < 0) return undefined;
    }
  }
  return undefined;
}
