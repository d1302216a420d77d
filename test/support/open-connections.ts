import { readdir, readlink } from 'node:fs/promises';

/**
 * How many times this process has `file` open: each SQLite connection holds one descriptor on
 * its database file (its WAL and shared memory are files of their own).
 */
export async function openDescriptorsOn(file: string): Promise<number> {
  const descriptors = await readdir('/proc/self/fd');
  const targets = await Promise.all(descriptors.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return targets.filter((target) => target === file).length;
}
