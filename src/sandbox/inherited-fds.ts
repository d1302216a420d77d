import { readdir, readFile } from 'node:fs/promises';

const O_CLOEXEC = 0o2000000;

/**
 * File descriptors of this process above stderr that a child would inherit: those opened
 * without close-on-exec, typically handed down by whatever started the service (a pipe
 * of a supervisor, a socket of socket activation). bwrap passes every inherited fd into
 * the sandbox, so each spawn covers these with /dev/null.
 *
 * Called once, at start-up: everything Node and libuv open later is close-on-exec, so the
 * set cannot grow. The fds are looked at one by one, so the scan itself opens at most one
 * more (reading them all at once on every spawn, as this once did, let concurrent spawns
 * count each other's handles until the process ran out of descriptors).
 */
export async function findInheritableFds(): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc/self/fd');
  } catch {
    return [];
  }
  const inheritable: number[] = [];
  for (const fd of entries.map(Number).filter((candidate) => Number.isInteger(candidate) && candidate > 2)) {
    const info = await readFile(`/proc/self/fdinfo/${String(fd)}`, 'utf8').catch(() => undefined);
    const octal = info === undefined ? undefined : /^flags:\s*([0-7]+)$/m.exec(info)?.[1];
    if (octal !== undefined && (Number.parseInt(octal, 8) & O_CLOEXEC) === 0) inheritable.push(fd);
  }
  return inheritable;
}
