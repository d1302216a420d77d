const SEGMENT_BYTES = 8_000;

/**
 * A run's result as JSON text, read from a UTF-8 byte offset in segments of at most 8,000
 * bytes, never splitting a character (a segment ends early rather than cut one).
 */
export function readResultSegment(options: { readonly result: unknown; readonly offset: number }): { result: string; offset: number; total_bytes: number; next_offset: number | null } {
  const bytes = Buffer.from(options.result === null ? '' : JSON.stringify(options.result), 'utf8');
  let start = Math.min(options.offset, bytes.length);
  // An offset inside a character starts at that character.
  while (start > 0 && start < bytes.length && isContinuation(bytes[start])) start -= 1;
  let end = Math.min(start + SEGMENT_BYTES, bytes.length);
  while (end < bytes.length && end > start && isContinuation(bytes[end])) end -= 1;
  return { result: bytes.subarray(start, end).toString('utf8'), offset: start, total_bytes: bytes.length, next_offset: end < bytes.length ? end : null };
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}
