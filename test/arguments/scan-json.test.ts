import { describe, expect, it } from 'vitest';
import { findBalancedObjectEnd, scanJson } from '../../src/arguments/scan-json.js';

describe('scanJson', () => {
  it('splits punctuation, strings and bare values, keeping each token start', () => {
    const scan = scanJson('{"a": [1, true]}');
    expect(scan.tokens.map((token) => [token.kind, token.text, token.start])).toEqual([
      ['{', '{', 0],
      ['string', '"a"', 1],
      [':', ':', 4],
      ['[', '[', 6],
      ['value', '1', 7],
      [',', ',', 8],
      ['value', 'true', 10],
      [']', ']', 14],
      ['}', '}', 15],
    ]);
    expect(scan.endsInString).toBe(false);
  });

  it('treats braces, brackets and escaped quotes inside a string as text', () => {
    const scan = scanJson('{"x":"}]\\"{["}');
    expect(scan.tokens.map((token) => token.kind)).toEqual(['{', 'string', ':', 'string', '}']);
    expect(scan.tokens[3]?.text).toBe('"}]\\"{["');
  });

  it('reports an unterminated string, even one ending in a lone backslash', () => {
    expect(scanJson('{"a":"abc').endsInString).toBe(true);
    expect(scanJson('{"a":"abc\\').endsInString).toBe(true);
    expect(scanJson('{"a":"abc\\\\"').endsInString).toBe(false);
  });

  it('reports whether the text ends with whitespace', () => {
    expect(scanJson('{"a":1').endsWithWhitespace).toBe(false);
    expect(scanJson('{"a":1\n').endsWithWhitespace).toBe(true);
    expect(scanJson('').endsWithWhitespace).toBe(false);
  });

  it('never throws on garbage: anything unexpected becomes a value token', () => {
    const scan = scanJson("{'a' : <tag> ~}");
    expect(scan.tokens.map((token) => token.kind)).toEqual(['{', 'value', ':', 'value', 'value', '}']);
  });
});

describe('findBalancedObjectEnd', () => {
  it('returns the index after the brace that closes the first object', () => {
    const text = 'say {"a":{"b":"}"}} then {"c":1}';
    const { tokens } = scanJson(text);
    const open = tokens.findIndex((token) => token.kind === '{');
    const end = findBalancedObjectEnd(tokens, open);
    expect(end).toBeDefined();
    expect(text.slice(tokens[open]!.start, end)).toBe('{"a":{"b":"}"}}');
  });

  it('returns undefined when the object never closes', () => {
    const { tokens } = scanJson('{"a":{"b":1}');
    expect(findBalancedObjectEnd(tokens, 0)).toBeUndefined();
  });
});
