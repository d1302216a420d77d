import { describe, expect, it } from 'vitest';
import { formatBytes, formatCount } from '../../../src/format/format-bytes.js';

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1 KB'],
    [1229, '1.2 KB'],
    [2355, '2.3 KB'],
    [256 * 1024, '256 KB'],
    [1024 * 1024 - 1, '1 MB'],
    [10 * 1024 * 1024, '10 MB'],
    [3.4 * 1024 ** 3, '3.4 GB'],
  ])('shows %d bytes as %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});

describe('formatCount', () => {
  it('uses the singular for one and the plural otherwise', () => {
    expect(formatCount(1, 'entry', 'entries')).toBe('1 entry');
    expect(formatCount(14, 'entry', 'entries')).toBe('14 entries');
    expect(formatCount(0, 'replacement')).toBe('0 replacements');
  });
});
