import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { describeFileError } from '../describe-file-error.js';
import type { OpenHomePath } from '../home-fs/open-home-path.js';
import { PatchApplyError } from './patch-apply-error.js';

/** A file larger than this is not read into memory to be patched or kept for a rollback. */
export const PATCH_FILE_MAX_BYTES = 16 * 1024 * 1024;

export interface OriginalFile {
  readonly bytes: Buffer;
  readonly mode: number;
}

/**
 * Reads a file a patch updates, moves or deletes, whole, so that the new content can be
 * computed and the old one put back if a later write fails. Refuses a folder, a device or
 * pipe, a file over `PATCH_FILE_MAX_BYTES`, and, with `refuseLinkAt` (the path as the model
 * wrote it), a symbolic link: deleting or moving "through" a link would act on its target.
 * The file is checked through the open handle, not by path; `O_NOFOLLOW` refuses a link put
 * in place of the resolved path meanwhile, and `O_NONBLOCK` keeps a FIFO from hanging.
 */
export async function readOriginalFile(options: { target: OpenHomePath; refuseLinkAt?: string | undefined }): Promise<OriginalFile> {
  const { target, refuseLinkAt } = options;
  const { display } = target;
  const refuse = (reason: string): PatchApplyError => new PatchApplyError({ path: display, message: `${reason}. Nothing was changed.` });
  if (refuseLinkAt !== undefined && target.stats?.isSymbolicLink() === true) {
    throw refuse(`${refuseLinkAt} is a symbolic link; apply_patch does not delete or move links (it would act on the file the link points to)`);
  }
  let handle: FileHandle;
  try {
    handle = await open(target.entry, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw refuse(describeFileError(error, display).message);
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw refuse(`${display} is a folder; apply_patch changes files only`);
    if (!stats.isFile()) throw refuse(`${display} is not a regular file (it is a device, pipe or socket)`);
    if (stats.size > PATCH_FILE_MAX_BYTES) throw refuse(`${display} is over ${PATCH_FILE_MAX_BYTES / 1024 / 1024} MiB, too large to patch`);
    const bytes = await handle.readFile();
    if (bytes.length > PATCH_FILE_MAX_BYTES) throw refuse(`${display} is over ${PATCH_FILE_MAX_BYTES / 1024 / 1024} MiB, too large to patch`);
    return { bytes, mode: stats.mode & 0o7777 };
  } catch (error) {
    if (error instanceof PatchApplyError) throw error;
    throw refuse(describeFileError(error, display).message);
  } finally {
    await handle.close();
  }
}
