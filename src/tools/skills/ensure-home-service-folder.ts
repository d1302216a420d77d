import { mkdir, realpath } from 'node:fs/promises';
import { FolderDescriptor, HomeFolder } from '../computer/home-fs/home-folder.js';
import type { HomeOwner } from '../computer/home-fs/open-home-path.js';

/** A service folder of the home, open by descriptor. Close `folder` when done. */
export interface HomeServiceFolder {
  /** The real home on the host, for `folder.isInside` just before a rename. */
  readonly realHome: string;
  readonly folder: HomeFolder;
}

/**
 * A folder directly in the agent home that the service writes into (`.skills`, `.mcporter`),
 * created when missing (through the home's descriptor, given to `owner`) and opened with
 * `O_DIRECTORY | O_NOFOLLOW`. The agent's own commands can change the home, so a symbolic link
 * (or a file) in its place is refused, never written through: the error tells the model to
 * remove it. Everything written into it goes through the returned descriptor.
 */
export async function ensureHomeServiceFolder(options: {
  readonly home: string;
  readonly name: string;
  readonly mode: number;
  readonly owner?: HomeOwner | undefined;
}): Promise<HomeServiceFolder> {
  const realHome = await realpath(options.home);
  const root = new HomeFolder({ handle: await FolderDescriptor.open(realHome), display: '' });
  try {
    const created = await mkdir(root.entry(options.name), { mode: options.mode }).then(
      () => true,
      (error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        return false;
      },
    );
    const folder = await root.openFolder(options.name).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ENOTDIR') {
        throw new Error(`"${options.name}" in the home folder is not a plain folder (a symbolic link or a file); remove it and use the skill again`, { cause: error });
      }
      throw error;
    });
    if (created && options.owner !== undefined) await folder.handle.chown(options.owner.uid, options.owner.gid);
    return { realHome, folder };
  } finally {
    await root.close();
  }
}
