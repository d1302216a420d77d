import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { describeFileError } from './describe-file-error.js';

/** How much of a file's start is searched for a NUL byte to tell binary from text. */
export const BINARY_SNIFF_BYTES = 8 * 1024;

/** How much of the file the sniffing read takes: enough that a small file is read whole by it. */
export const HEAD_BYTES = 64 * 1024;

export interface OpenTextFile {
  readonly handle: FileHandle;
  readonly size: number;
  readonly mode: number;
  /** The file's first bytes (up to HEAD_BYTES), already read: callers continue after them. */
  readonly head: Buffer;
}

/**
 * Opens a file the model wants to read as text, refusing what is not: a folder (with a hint
 * to use list_files), a device, pipe or socket, or a binary file (a NUL byte in its first
 * 8 KiB). The file is checked through the open handle, not by path, so nothing can be
 * swapped in between the check and the read; `O_NOFOLLOW` refuses a symbolic link put in
 * place of the resolved path, and `O_NONBLOCK` keeps a FIFO from hanging the open.
 * The caller closes the handle.
 */
export async function openTextFile(options: { absolute: string; display: string }): Promise<OpenTextFile> {
  const { absolute, display } = options;
  let handle: FileHandle;
  try {
    handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw describeFileError(error, display);
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new Error(`${display} is a folder; use list_files to see what it contains`);
    if (!stats.isFile()) {
      throw new Error(`${display} is not a regular file (it is a device, pipe or socket); only text files can be read`);
    }
    // One read serves both the binary check and, for most files, the whole content.
    const buffer = Buffer.allocUnsafe(Math.min(HEAD_BYTES, stats.size));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer.subarray(0, bytesRead);
    if (head.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
      throw new Error(`${display} is a binary file (it contains NUL bytes); only UTF-8 text files can be read or edited`);
    }
    return { handle, size: stats.size, mode: stats.mode, head };
  } catch (error) {
    await handle.close();
    throw describeFileError(error, display);
  }
}
