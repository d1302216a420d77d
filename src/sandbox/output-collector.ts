/** What a collector hands back once the process is done. */
export interface CollectedOutput {
  /** The kept text: everything, or the head, a note of what was cut, and the tail. */
  readonly text: string;
  /** Bytes the process wrote in total. */
  readonly totalBytes: number;
  /** Bytes left out of `text` (0 when everything fit). */
  readonly truncatedBytes: number;
}

export interface OutputCollector {
  /** Takes the next chunk, in arrival order. Memory stays within about `limitBytes`. */
  push(chunk: Uint8Array): void;
  finish(): CollectedOutput;
}

/**
 * Keeps the first and the last bytes of a stream within `limitBytes`, however much is
 * written: the head fills once, the tail is a window over the most recent chunks, and
 * everything in between is only counted. The whole text, cut note included, stays within
 * the limit, and a cut never splits a UTF-8 character.
 */
export function createOutputCollector(options: { limitBytes: number }): OutputCollector {
  const limit = Math.max(256, Math.floor(options.limitBytes));
  const headCapacity = Math.ceil(limit / 2);
  const tailCapacity = limit - headCapacity;
  const head = Buffer.alloc(headCapacity);
  let headLength = 0;
  const tail: Buffer[] = [];
  let tailLength = 0;
  let totalBytes = 0;

  const push = (chunk: Uint8Array): void => {
    totalBytes += chunk.length;
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (headLength < headCapacity) {
      const taken = Math.min(headCapacity - headLength, rest.length);
      rest.copy(head, headLength, 0, taken);
      headLength += taken;
      rest = rest.subarray(taken);
    }
    if (rest.length === 0) return;
    // Copy: the stream may reuse its buffers, and a slice would pin a large one.
    tail.push(Buffer.from(rest.subarray(Math.max(0, rest.length - tailCapacity))));
    tailLength += Math.min(rest.length, tailCapacity);
    for (let first = tail[0]; first !== undefined && tail.length > 1 && tailLength - first.length >= tailCapacity; first = tail[0]) {
      tailLength -= first.length;
      tail.shift();
    }
  };

  const finish = (): CollectedOutput => {
    const headBytes = head.subarray(0, headLength);
    const afterHead = totalBytes - headLength;
    const tailBytes = Buffer.concat(tail, tailLength);
    if (afterHead <= tailCapacity) {
      // Everything fit: the tail window holds every byte after the head.
      const whole = Buffer.concat([headBytes, tailBytes.subarray(tailBytes.length - afterHead)]);
      return { text: whole.toString('utf8'), totalBytes, truncatedBytes: 0 };
    }
    // The note takes room from both ends so that the whole text stays within the limit.
    const noteRoom = Math.ceil(Buffer.byteLength(cutNote(totalBytes)) / 2);
    const keptHead = headBytes.subarray(0, utf8Boundary(headBytes, Math.max(0, headLength - noteRoom)));
    const tailWindow = tailBytes.subarray(tailBytes.length - Math.max(0, tailCapacity - noteRoom));
    const keptTail = tailWindow.subarray(skipContinuationBytes(tailWindow));
    const truncatedBytes = totalBytes - keptHead.length - keptTail.length;
    return {
      text: `${keptHead.toString('utf8')}${cutNote(truncatedBytes)}${keptTail.toString('utf8')}`,
      totalBytes,
      truncatedBytes,
    };
  };

  return { push, finish };
}

function cutNote(cutBytes: number): string {
  return `\n[… ${cutBytes.toLocaleString('en-US')} bytes cut from the middle of the output …]\n`;
}

/** The largest end ≤ `end` that does not fall inside a multi-byte UTF-8 character. */
function utf8Boundary(bytes: Buffer, end: number): number {
  let start = end;
  // Walk back over at most three continuation bytes to the lead byte of the last character.
  while (start > 0 && end - start < 4 && isContinuation(bytes[start - 1] ?? 0)) start -= 1;
  if (start === 0) return end;
  const lead = bytes[start - 1] ?? 0;
  const expected = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return end - (start - 1) >= expected ? end : start - 1;
}

function skipContinuationBytes(bytes: Buffer): number {
  let index = 0;
  while (index < bytes.length && index < 3 && isContinuation(bytes[index] ?? 0)) index += 1;
  return index;
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}
