import { describe, expect, it } from 'vitest';
import { createOutputCollector } from '../../src/sandbox/output-collector.js';
import { formatDuration } from '../../src/format/format-duration.js';

function collect(limitBytes: number, chunks: readonly (string | Buffer)[]) {
  const collector = createOutputCollector({ limitBytes });
  for (const chunk of chunks) collector.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return collector.finish();
}

describe('createOutputCollector', () => {
  it('keeps output that fits whole, however it was chunked', () => {
    const text = 'a'.repeat(1000) + 'b'.repeat(24);
    const chunked = Array.from({ length: 1024 }, (_, index) => text.charAt(index));
    expect(collect(1024, [text])).toEqual({ text, totalBytes: 1024, truncatedBytes: 0 });
    expect(collect(1024, chunked)).toEqual({ text, totalBytes: 1024, truncatedBytes: 0 });
  });

  it('keeps head and tail within the limit, cut note included, when one byte too many arrives', () => {
    const text = 'h'.repeat(600) + 'x' + 't'.repeat(424);
    const result = collect(1024, [text]);
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(1024);
    expect(result.text.startsWith('hhhh')).toBe(true);
    expect(result.text.endsWith('tttt')).toBe(true);
    expect(result.text).toContain(`${String(result.truncatedBytes)} bytes cut from the middle`);
    expect(result.totalBytes).toBe(1025);
    const kept = result.text.split(/\n\[… .* …\]\n/);
    expect(kept.join('').length + result.truncatedBytes).toBe(1025);
  });

  it('stays within the limit for a stream far larger than it, in odd-sized chunks', () => {
    const collector = createOutputCollector({ limitBytes: 4096 });
    let total = 0;
    for (let index = 0; index < 5_000; index += 1) {
      const chunk = Buffer.alloc(1 + ((index * 7919) % 3000), 97 + (index % 26));
      total += chunk.length;
      collector.push(chunk);
    }
    collector.push(Buffer.from('THE END'));
    const result = collector.finish();
    expect(result.totalBytes).toBe(total + 7);
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(4096);
    expect(result.text.endsWith('THE END')).toBe(true);
    expect(result.text.startsWith('a')).toBe(true);
  });

  it('never splits a multi-byte character at either cut', () => {
    for (let shift = 0; shift < 4; shift += 1) {
      const text = 'x'.repeat(shift) + '€😀'.repeat(400);
      const result = collect(1024, [text]);
      expect(result.text).not.toContain('\uFFFD');
      expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(1024);
      const kept = result.text.split(/\n\[… .* …\]\n/).join('');
      expect(Buffer.byteLength(kept) + result.truncatedBytes).toBe(Buffer.byteLength(text));
    }
  });

  it('reports empty output as empty', () => {
    expect(collect(1024, [])).toEqual({ text: '', totalBytes: 0, truncatedBytes: 0 });
  });
});

describe('formatDuration', () => {
  it('reads as a person would say it', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1_200)).toBe('1.2 s');
    expect(formatDuration(5_000)).toBe('5 s');
    expect(formatDuration(3_140)).toBe('3.1 s');
    expect(formatDuration(42_400)).toBe('42 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatDuration(120_000)).toBe('2 min');
  });
});
