import { describe, expect, it } from 'vitest';
import { lineNumberWidth, numberLine, numberLines } from '../../../src/tools/computer/numbered-line.js';

describe('numbered lines', () => {
  it('shows each line as cat -n does: the number right-aligned in six columns, a tab, the text', () => {
    expect(numberLine(7, 'seven')).toBe('     7\tseven');
    expect(numberLines(['a', '', 'c'], 1)).toBe('     1\ta\n     2\t\n     3\tc');
    expect(numberLines(['x'], 4095)).toBe('  4095\tx');
    expect(numberLines(['x', 'y'], 4095)).toBe('  4095\tx\n  4096\ty');
    expect(numberLines([], 1)).toBe('');
  });

  it('widens the column past 999,999 lines, as it says it does', () => {
    expect(numberLines(['x', 'y'], 999_999)).toBe('999999\tx\n1000000\ty');
    expect(lineNumberWidth(999_999)).toBe(6);
    expect(lineNumberWidth(1_000_000)).toBe(7);
  });

  it('gives the same text from the cached prefixes as from the first call', () => {
    const lines = Array.from({ length: 300 }, (_, index) => `line ${index}`);
    const first = numberLines(lines, 3_900);
    expect(numberLines(lines, 3_900)).toBe(first);
    expect(first.split('\n').map((line, index) => line === `${String(3_900 + index).padStart(6)}\t${lines[index] ?? ''}`)).not.toContain(false);
  });
});
