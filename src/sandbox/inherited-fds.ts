import { readdir, readFile } from 'node:fs/promises';

const O_CLOEXEC = 0o2000000;

/**
 * File descriptors of this process above stderr that a child would inherit: those opened
 * without close-on-exec, typically handed down by whatever started the service (a pipe
 * of a supervisor, a socket of socket activation). bwrap passes every inherited fd into
 * the sandbox, so the spawn covers each of these with /dev/null.
 */
export async function findInheritableFds(): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc/self/fd');
  } catch {
    return [];
  }
  const candidates = entries.map(Number).filter((fd) => Number.isInteger(fd) && fd > 2);
  const flags = await Promise.all(
    candidates.map((fd) =>
      readFile(`/proc/self/fdinfo/${String(fd)}`, 'utf8').then(
        (info) => /^flags:\s*([0-7]+)$/m.exec(info)?.[1],
        () => undefined,
      ),
    ),
  );
  return candidates.filter((_fd, index) => {
    const octal = flags[index];
    return octal !== undefined && (Number.parseInt(octal, 8) & O_CLOEXEC) === 0;
  });
}
