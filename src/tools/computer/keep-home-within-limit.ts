import { unlink } from 'node:fs/promises';
import type { HomeOwner } from './home-fs/open-home-path.js';
import { openHomePath } from './home-fs/open-home-path.js';
import { measureHome } from './home-fs/measure-home.js';

export interface HomeUpkeep {
  /** What the home holds now, after any removal. */
  readonly bytes: number;
  /** Files a command made or changed that were removed because the home went over its limit. */
  readonly removed: readonly { readonly display: string; readonly bytes: number }[];
  /** The home was over its limit and the command's own files could not bring it back (it was over before). */
  readonly stillOver: boolean;
}

/**
 * Measures the home (through descriptors) and gives what belongs to someone else to the
 * sandbox user. With `changedSince` (a command's start), when the home is over `maxBytes`,
 * the files that command created or changed are removed, largest first, until it fits
 * again: the excess of a command is not kept, and files from before it are never touched.
 * Run while the agent's lock is held, so no command of the agent changes the home meanwhile.
 */
export async function keepHomeWithinLimit(options: {
  home: string;
  owner: HomeOwner | undefined;
  maxBytes: number;
  changedSince: number | undefined;
}): Promise<HomeUpkeep> {
  // ctime has the kernel's coarse clock: a little slack so a file changed in the first tick counts.
  const since = options.changedSince === undefined ? undefined : options.changedSince - 20;
  const measure = await measureHome({ home: options.home, owner: options.owner, changedSince: since });
  let bytes = measure.bytes;
  const removed: { display: string; bytes: number }[] = [];
  if (since === undefined || bytes <= options.maxBytes) return { bytes, removed, stillOver: bytes > options.maxBytes && since !== undefined };
  for (const file of measure.changed) {
    if (bytes <= options.maxBytes) break;
    const target = await openHomePath({ home: options.home, requested: file.display, followLast: false }).catch(() => undefined);
    if (target === undefined) continue;
    try {
      if (target.stats?.isFile() !== true) continue;
      await unlink(target.entry);
      bytes -= file.bytes;
      removed.push(file);
    } catch {
      // Gone already, or not removable: measured again below.
    } finally {
      await target.close();
    }
  }
  if (removed.length > 0) bytes = (await measureHome({ home: options.home })).bytes;
  return { bytes, removed, stillOver: bytes > options.maxBytes };
}
