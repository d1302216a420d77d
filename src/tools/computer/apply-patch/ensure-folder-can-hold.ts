import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { HomePath } from '../home-path.js';
import { PatchApplyError } from './patch-apply-error.js';

/**
 * Checks, before anything is written, that a new file's folders can be created: the nearest
 * part of its path that exists must be a folder, not a file. (`target.absolute` of a path
 * that does not exist yet is the real path of its deepest existing folder plus the rest.)
 */
export async function ensureFolderCanHold(options: { realHome: string; target: HomePath }): Promise<void> {
  const { realHome, target } = options;
  let current = path.dirname(target.absolute);
  for (;;) {
    const stats = await lstat(current).catch(() => undefined);
    if (stats !== undefined) {
      if (stats.isDirectory()) return;
      const display = path.relative(realHome, current) || '.';
      throw new PatchApplyError({
        path: target.display,
        message: `cannot create ${target.display}: ${display} is a file, not a folder. Nothing was changed.`,
      });
    }
    const parent = path.dirname(current);
    if (parent === current) return;
    current = parent;
  }
}
