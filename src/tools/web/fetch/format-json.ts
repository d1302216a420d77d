/**
 * Pretty-prints JSON text with two-space indentation, or returns undefined when it is not
 * valid JSON. It re-indents the original tokens instead of `JSON.stringify(JSON.parse(…))`,
 * which would silently round large integers (ids above 2^53) and rewrite escapes.
 */
export function formatJson(source: string): string | undefined {
  try {
    JSON.parse(source);
  } catch {
    return undefined;
  }
  const parts: string[] = [];
  let depth = 0;
  let index = 0;
  const newline = (): string => `\n${'  '.repeat(depth)}`;
  while (index < source.length) {
    const character = source.charAt(index);
    if (character === '"') {
      const end = stringEnd(source, index);
      parts.push(source.slice(index, end));
      index = end;
      continue;
    }
    index += 1;
    if (character === '{' || character === '[') {
      const next = nextSignificant(source, index);
      if (source.charAt(next) === (character === '{' ? '}' : ']')) {
        parts.push(character === '{' ? '{}' : '[]');
        index = next + 1;
        continue;
      }
      depth += 1;
      parts.push(character, newline());
    } else if (character === '}' || character === ']') {
      depth -= 1;
      parts.push(newline(), character);
    } else if (character === ',') {
      parts.push(',', newline());
    } else if (character === ':') {
      parts.push(': ');
    } else if (!/\s/.test(character)) {
      parts.push(character);
    }
  }
  return parts.join('');
}

/** The index just past the string literal that opens at `start`. */
function stringEnd(source: string, start: number): number {
  let index = start + 1;
  while (index < source.length) {
    const character = source.charAt(index);
    if (character === '\\') index += 2;
    else if (character === '"') return index + 1;
    else index += 1;
  }
  return source.length;
}

function nextSignificant(source: string, start: number): number {
  let index = start;
  while (index < source.length && /\s/.test(source.charAt(index))) index += 1;
  return index;
}
