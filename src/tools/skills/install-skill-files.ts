import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, lstat, mkdir, open, rename } from 'node:fs/promises';
import path from 'node:path';
import { HomePathError } from '../computer/home-path-error.js';
import type { HomeFolder } from '../computer/home-fs/home-folder.js';
import type { HomeOwner } from '../computer/home-fs/open-home-path.js';
import { removeHomeTree } from '../computer/home-fs/remove-home-tree.js';
import { ensureHomeServiceFolder } from './ensure-home-service-folder.js';
import type { Skill } from './skill-catalog.js';

/** The folder of the home that holds the copies of the skills' files. */
export const SKILLS_FOLDER = '.skills';

/**
 * Copies a skill's files into the agent home at `.skills/<name>/`, where both the file tools
 * and `run_command` reach them by the relative paths the skill uses (the Agent Skills
 * convention), and where only the skills this agent enabled appear. Files are made read-only
 * (0444, 0555 when executable) as a hint; the copy is rebuilt on every use, so what the agent
 * changed there does not last. The new copy is built in a fresh folder and renamed into place:
 * a reader sees the old copy or the new one. Only files listed at start-up are copied, and only
 * while they are still regular files (never through a symbolic link). Every folder and file of
 * the copy is made through the descriptor of the folder above it (never by a path in the home),
 * and given to `owner`, so a `.skills` swapped for a link meanwhile cannot lead outside. The
 * caller holds the agent home lock. Returns the folder, relative to the home.
 */
export async function installSkillFiles(options: {
  readonly home: string;
  readonly skill: Skill;
  readonly owner?: HomeOwner | undefined;
  readonly signal: AbortSignal;
}): Promise<string> {
  const { skill, signal, owner } = options;
  const { realHome, folder: skills } = await ensureHomeServiceFolder({ home: options.home, name: SKILLS_FOLDER, mode: 0o755, owner });
  const stagingName = `.${skill.name}.${randomUUID()}.tmp`;
  try {
    const staging = await makeFolder({ parent: skills, name: stagingName, owner });
    try {
      for (const file of skill.files) {
        signal.throwIfAborted();
        const source = path.join(skill.folder, ...file.path.split('/'));
        const stats = await lstat(source).catch(() => undefined);
        if (stats === undefined || !stats.isFile()) continue;
        await copyInto({ root: staging, parts: file.path.split('/'), source, mode: file.executable ? 0o555 : 0o444, owner });
      }
    } finally {
      await staging.close();
    }
    signal.throwIfAborted();
    if (!(await skills.isInside(realHome))) throw new HomePathError(`"${SKILLS_FOLDER}" was moved out of the agent home while the skill was installed`);
    // Removed through descriptors: a symbolic link there is removed itself, never followed.
    await removeHomeTree({ folder: skills, name: skill.name });
    await rename(skills.entry(stagingName), skills.entry(skill.name)).catch(async (error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      // Another turn of this agent installed the same files between the removal and the rename.
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      await removeHomeTree({ folder: skills, name: stagingName });
    });
    return `${SKILLS_FOLDER}/${skill.name}`;
  } catch (error) {
    await removeHomeTree({ folder: skills, name: stagingName }).catch(() => undefined);
    throw error;
  } finally {
    await skills.close();
  }
}

/** Creates the folder `name` in `parent` (an existing one is fine) and opens it, never through a link. */
async function makeFolder(options: { parent: HomeFolder; name: string; owner: HomeOwner | undefined }): Promise<HomeFolder> {
  const created = await mkdir(options.parent.entry(options.name), { mode: 0o755 }).then(
    () => true,
    (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return false;
    },
  );
  const folder = await options.parent.openFolder(options.name);
  if (created && options.owner !== undefined) await folder.handle.chown(options.owner.uid, options.owner.gid);
  return folder;
}

/** Copies `source` to `parts` below `root`, creating the folders on the way through descriptors. */
async function copyInto(options: { root: HomeFolder; parts: readonly string[]; source: string; mode: number; owner: HomeOwner | undefined }): Promise<void> {
  const folders = options.parts.slice(0, -1);
  const name = options.parts.at(-1);
  if (name === undefined) return;
  const opened: HomeFolder[] = [];
  let folder = options.root;
  try {
    for (const part of folders) {
      folder = await makeFolder({ parent: folder, name: part, owner: options.owner });
      opened.push(folder);
    }
    const target = folder.entry(name);
    // COPYFILE_EXCL: never onto something that is already there (a planted link).
    await copyFile(options.source, target, constants.COPYFILE_EXCL);
    const handle = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      if (options.owner !== undefined) await handle.chown(options.owner.uid, options.owner.gid);
      await handle.chmod(options.mode);
    } finally {
      await handle.close();
    }
  } finally {
    for (const each of opened) await each.close();
  }
}
