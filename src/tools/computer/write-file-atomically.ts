import { randomUUID } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes `content` to `absolute` so that a reader sees the old file or the new one, never a
 * half-written one: the bytes go to a temporary file in the same folder (same file system,
 * so the rename is atomic), are flushed, and the temporary file is renamed over the target.
 * A rename replaces a symbolic link at the target instead of writing through it. `mode`
 * keeps an overwritten file's permissions. The signal is checked before the rename, the
 * last moment the write can still be called off; the temporary file is removed on any failure.
 */
export async function writeFileAtomically(options: {
  absolute: string;
  content: string;
  signal: AbortSignal;
  mode?: number | undefined;
}): Promise<void> {
  const { absolute, content, signal, mode } = options;
  // Not named after the target: a long file name plus a suffix could exceed NAME_MAX.
  const temporary = path.join(path.dirname(absolute), `.turn-runtime-${randomUUID()}.tmp`);
  const handle = await open(temporary, 'wx', 0o666);
  try {
    try {
      if (mode !== undefined) await handle.chmod(mode & 0o7777);
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    signal.throwIfAborted();
    await rename(temporary, absolute);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}
