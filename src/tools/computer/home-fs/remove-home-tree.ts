import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import type { HomeFolder } from './home-folder.js';

/**
 * Removes `name` in `folder` and, when it is a folder, everything below it, walking through
 * folder descriptors (each opened `O_NOFOLLOW`): a symbolic link is removed itself, never
 * followed, and nothing swapped during the walk can lead it outside. Nothing there is fine.
 */
export async function removeHomeTree(options: { readonly folder: HomeFolder; readonly name: string }): Promise<void> {
  const { folder, name } = options;
  const entry = folder.entry(name);
  const stats = await lstat(entry).catch((error: unknown) => {
    if (isGone(error)) return undefined;
    throw error;
  });
  if (stats === undefined) return;
  if (!stats.isDirectory()) {
    await unlink(entry).catch((error: unknown) => {
      if (!isGone(error)) throw error;
    });
    return;
  }
  const child = await folder.openFolder(name);
  try {
    for (const inner of await readdir(child.path)) await removeHomeTree({ folder: child, name: inner });
  } finally {
    await child.close();
  }
  await rmdir(entry).catch((error: unknown) => {
    if (!isGone(error)) throw error;
  });
}

function isGone(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ENOENT';
}
