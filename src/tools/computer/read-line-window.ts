import { cutLongLine, lineNumberWidth, MAX_LINE_CHARS } from './numbered-line.js';

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

export interface LineWindow {
  /** The lines shown, without their line ends, long ones cut. */
  readonly lines: readonly string[];
  /** The 1-based number of `lines[0]`. */
  readonly firstLine: number;
  /** Lines in the whole file (a last line without a newline counts). */
  readonly totalLines: number;
  /** The window ended early because the output reached `maxOutputBytes`. */
  readonly stoppedForBytes: boolean;
  /** How many of the shown lines were cut for length. */
  readonly cutLines: number;
}

/**
 * Reads lines `offset … offset+limit-1` of a text file, keeping at most `maxOutputBytes`
 * of numbered output, and counts every line of the file so the model can be told where the
 * rest begins. The file is streamed in chunks, never held whole, and a very long line
 * keeps only its first MAX_LINE_CHARS characters in memory. Lines are counted on the raw
 * bytes (a newline byte never occurs inside a multi-byte UTF-8 sequence); only the window
 * is decoded. A trailing CR is dropped so CRLF files read like LF files.
 */
export async function readLineWindow(options: {
  /** Reads into the buffer from a position, giving the bytes read (0 at the end). */
  read: (buffer: Buffer, position: number) => Promise<number>;
  /** Bytes already read from the start of the file; reading continues after them. */
  head?: Buffer;
  /** The file's size when opened: reading stops there (no extra read to find the end). */
  size?: number;
  offset: number;
  limit: number;
  maxOutputBytes: number;
  signal: AbortSignal;
}): Promise<LineWindow> {
  const { read, offset, limit, maxOutputBytes, signal } = options;
  const decoder = new TextDecoder('utf-8');
  let buffer: Buffer | undefined;
  const lines: string[] = [];
  let outputBytes = 0;
  let cutLines = 0;
  // An object, not `let`s: the closures below set these and the loop reads them.
  const state = { done: false, stoppedForBytes: false };

  let lineNumber = 1;
  let current = '';
  let currentLength = 0;
  let endsWithCarriageReturn = false;

  let newlines = 0;
  let position = 0;
  let lastByte: number | undefined;

  const finishLine = (): void => {
    if (lineNumber >= offset) {
      const length = currentLength - (endsWithCarriageReturn ? 1 : 0);
      const kept = current.length > length ? current.slice(0, length) : current;
      const { text, cut } = cutLongLine(kept, length);
      // The number column, the tab and the newline: see numberLine.
      const bytes = Buffer.byteLength(text) + lineNumberWidth(lineNumber) + 2;
      if (lines.length > 0 && outputBytes + bytes > maxOutputBytes) {
        state.done = true;
        state.stoppedForBytes = true;
        return;
      }
      lines.push(text);
      outputBytes += bytes;
      if (cut) cutLines += 1;
      if (lines.length >= limit) state.done = true;
    }
    lineNumber += 1;
    current = '';
    currentLength = 0;
    endsWithCarriageReturn = false;
  };

  const take = (text: string): void => {
    let start = 0;
    while (!state.done) {
      const newline = text.indexOf('\n', start);
      const end = newline === -1 ? text.length : newline;
      if (lineNumber >= offset && end > start) {
        if (current.length < MAX_LINE_CHARS) current += text.slice(start, Math.min(end, start + MAX_LINE_CHARS - current.length + 1));
        currentLength += end - start;
        endsWithCarriageReturn = text.charCodeAt(end - 1) === 0x0d;
      }
      if (newline === -1) return;
      finishLine();
      start = newline + 1;
    }
  };

  let pending = options.head;
  for (;;) {
    signal.throwIfAborted();
    let chunk: Buffer;
    if (pending !== undefined) {
      chunk = pending;
      pending = undefined;
    } else {
      if (options.size !== undefined && position >= options.size) break;
      buffer ??= Buffer.alloc(CHUNK_BYTES);
      chunk = buffer.subarray(0, await read(buffer, position));
    }
    const bytesRead = chunk.length;
    if (bytesRead === 0) break;
    position += bytesRead;
    lastByte = chunk[bytesRead - 1];
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) newlines += 1;
    if (!state.done) take(decoder.decode(chunk, { stream: true }));
  }
  if (!state.done) take(decoder.decode());
  // A last line without a newline still counts.
  if (lastByte !== undefined && lastByte !== NEWLINE && !state.done) finishLine();
  const totalLines = newlines + (lastByte !== undefined && lastByte !== NEWLINE ? 1 : 0);
  return { lines, firstLine: offset, totalLines, stoppedForBytes: state.stoppedForBytes, cutLines };
}
