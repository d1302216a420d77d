import { lchown, lstat, readdir, realpath } from 'node:fs/promises';
import { FolderDescriptor, HomeFolder } from './home-folder.js';
import type { HomeOwner } from './open-home-path.js';

/** Folders deeper than this are not opened (each level holds a descriptor while it is walked). */
export const MEASURE_MAX_DEPTH = 128;

export interface HomeMeasure {
  /** Disk space the home's files and folders take (st_blocks × 512, as du counts). */
  readonly bytes: number;
  readonly files: number;
  /** Regular files whose inode changed at or after `changedSince`, largest first. */
  readonly changed: readonly { readonly display: string; readonly bytes: number }[];
  /** Entries given to the owner because they belonged to someone else (files the service wrote). */
  readonly chowned: number;
  /** True when folders deeper than MEASURE_MAX_DEPTH were left uncounted. */
  readonly tooDeep: boolean;
}

/**
 * Walks an agent home through folder descriptors (never by path, so nothing swapped during
 * the walk can lead it outside), adding up the disk space, listing the files changed since a
 * moment (their ctime, which no command can set back), and, with `owner`, giving every entry
 * that belongs to someone else to the owner: what the service writes into a home (skills,
 * saved pages) must stay changeable by the commands, which run as that owner. A file with
 * more than one hard link is left as it is, in case its other name is outside the home.
 */
export async function measureHome(options: { home: string; owner?: HomeOwner | undefined; changedSince?: number | undefined }): Promise<HomeMeasure> {
  const realHome = await realpath(options.home);
  const root = new HomeFolder({ handle: await FolderDescriptor.open(realHome), display: '' });
  const state = { bytes: 0, files: 0, chowned: 0, tooDeep: false, changed: [] as { display: string; bytes: number }[] };
  try {
    const rootStats = await root.handle.stat();
    state.bytes += rootStats.blocks * 512;
    await walk({ folder: root, depth: 0, state, owner: options.owner, changedSince: options.changedSince });
  } finally {
    await root.close();
  }
  state.changed.sort((a, b) => b.bytes - a.bytes);
  return state;
}

async function walk(options: {
  folder: HomeFolder;
  depth: number;
  state: { bytes: number; files: number; chowned: number; tooDeep: boolean; changed: { display: string; bytes: number }[] };
  owner: HomeOwner | undefined;
  changedSince: number | undefined;
}): Promise<void> {
  const { folder, state, owner } = options;
  const names = await readdir(folder.path).catch(() => [] as string[]);
  for (const name of names) {
    const entry = folder.entry(name);
    const stats = await lstat(entry).catch(() => undefined);
    if (stats === undefined) continue;
    state.bytes += stats.blocks * 512;
    if (owner !== undefined && (stats.uid !== owner.uid || stats.gid !== owner.gid) && (stats.isDirectory() || stats.nlink === 1)) {
      // lchown never follows the last component, and the folder is held by its descriptor.
      if (await lchown(entry, owner.uid, owner.gid).then(() => true, () => false)) state.chowned += 1;
    }
    if (stats.isFile()) {
      state.files += 1;
      if (options.changedSince !== undefined && stats.ctimeMs >= options.changedSince) state.changed.push({ display: folder.displayOf(name), bytes: stats.blocks * 512 });
      continue;
    }
    if (!stats.isDirectory()) continue;
    if (options.depth + 1 > MEASURE_MAX_DEPTH) {
      state.tooDeep = true;
      continue;
    }
    const child = await folder.openFolder(name).catch(() => undefined);
    if (child === undefined) continue;
    try {
      await walk({ ...options, folder: child, depth: options.depth + 1 });
    } finally {
      await child.close();
    }
  }
}
