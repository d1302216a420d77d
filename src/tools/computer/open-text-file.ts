import { closeSync, constants, fstatSync, openSync, read, readSync } from 'node:fs';
import { promisify } from 'node:util';
import { describeFileError } from './describe-file-error.js';
import { syncCall } from './home-fs/sync-call.js';

/** How much of a file's start is searched for a NUL byte to tell binary from text. */
export const BINARY_SNIFF_BYTES = 8 * 1024;

/** How much of the file the sniffing read takes: enough that a small file is read whole by it. */
export const HEAD_BYTES = 64 * 1024;

const readAsync = promisify(read);

/**
 * A text file opened for reading: its descriptor, what fstat said of it when opened, and its
 * first bytes. Close it when done (closing twice closes once: the number could be someone
 * else's descriptor by then).
 */
export class OpenTextFile {
  readonly size: number;
  readonly mode: number;
  /** The file's first bytes (up to HEAD_BYTES), already read: callers continue after them. */
  readonly head: Buffer;
  readonly #fd: number;
  #closed = false;

  constructor(options: { fd: number; size: number; mode: number; head: Buffer }) {
    this.#fd = options.fd;
    this.size = options.size;
    this.mode = options.mode;
    this.head = options.head;
  }

  /** Reads into `buffer` from `position`, asynchronously: past its head a file can be large. Returns the bytes read. */
  async read(buffer: Buffer, position: number): Promise<number> {
    if (this.#closed) throw new Error('the file was closed');
    const { bytesRead } = await readAsync(this.#fd, buffer, 0, buffer.length, position);
    return bytesRead;
  }

  /**
   * The whole file, checking `signal` between reads. It must still be the `size` it had when
   * opened: one that grew meanwhile (another process writing it) is refused, not cut short.
   */
  async readAll(signal: AbortSignal, display: string): Promise<Buffer> {
    const whole = Buffer.alloc(this.size);
    this.head.copy(whole);
    let filled = this.head.length;
    while (filled < whole.length) {
      signal.throwIfAborted();
      const bytesRead = await this.read(whole.subarray(filled), filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled === this.size && (await this.read(Buffer.alloc(1), filled)) > 0) {
      throw new Error(`${display} changed while it was being read; try again`);
    }
    return whole.subarray(0, filled);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      closeSync(this.#fd);
    } catch {
      // A descriptor opened for reading has nothing to lose at close.
    }
  }
}

/**
 * Opens a file the model wants to read as text, refusing what is not: a folder (with a hint
 * to use list_files), a device, pipe or socket, or a binary file (a NUL byte in its first
 * 8 KiB). The file is checked through the open descriptor, not by path, so nothing can be
 * swapped in between the check and the read; `O_NOFOLLOW` refuses a symbolic link put in
 * place of the resolved path, and `O_NONBLOCK` keeps a FIFO from hanging the open. The open,
 * the fstat and the read of the first 64 KiB are synchronous calls (see
 * home-fs/sync-call.ts). The caller closes the file.
 */
export function openTextFile(options: { absolute: string; display: string }): Promise<OpenTextFile> {
  const { absolute, display } = options;
  return syncCall(() => {
    let fd: number;
    try {
      fd = openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      throw describeFileError(error, display);
    }
    try {
      const stats = fstatSync(fd);
      if (stats.isDirectory()) throw new Error(`${display} is a folder; use list_files to see what it contains`);
      if (!stats.isFile()) {
        throw new Error(`${display} is not a regular file (it is a device, pipe or socket); only text files can be read`);
      }
      // One read serves both the binary check and, for most files, the whole content.
      const buffer = Buffer.allocUnsafe(Math.min(HEAD_BYTES, stats.size));
      const bytesRead = buffer.length === 0 ? 0 : readSync(fd, buffer, 0, buffer.length, 0);
      const head = buffer.subarray(0, bytesRead);
      if (head.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
        throw new Error(`${display} is a binary file (it contains NUL bytes); only UTF-8 text files can be read or edited`);
      }
      return new OpenTextFile({ fd, size: stats.size, mode: stats.mode, head });
    } catch (error) {
      closeSync(fd);
      throw describeFileError(error, display);
    }
  });
}
