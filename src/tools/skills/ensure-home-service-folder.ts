import { lstat, mkdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * A folder directly in the agent home that the service writes into (`.skills`, `.mcporter`),
 * created when missing. The agent's own commands can change the home, so a symbolic link (or a
 * file) in its place is refused, never written through: the error tells the model to remove it.
 */
export async function ensureHomeServiceFolder(options: { readonly home: string; readonly name: string; readonly mode: number }): Promise<string> {
  const folder = path.join(options.home, options.name);
  await mkdir(folder, { mode: options.mode }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  });
  const stats = await lstat(folder);
  if (stats.isSymbolicLink() || !stats.isDirectory()) {
    throw new Error(`"${options.name}" in the home folder is not a plain folder (a symbolic link or a file); remove it and use the skill again`);
  }
  return folder;
}
