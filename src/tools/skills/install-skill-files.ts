import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
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
 * while they are still regular files (never through a symbolic link). Returns the folder,
 * relative to the home.
 */
export async function installSkillFiles(options: { readonly home: string; readonly skill: Skill; readonly signal: AbortSignal }): Promise<string> {
  const { skill, signal } = options;
  const skills = await ensureHomeServiceFolder({ home: options.home, name: SKILLS_FOLDER, mode: 0o755 });
  const staging = path.join(skills, `.${skill.name}.${randomUUID()}.tmp`);
  await mkdir(staging, { mode: 0o755 });
  try {
    for (const file of skill.files) {
      signal.throwIfAborted();
      const source = path.join(skill.folder, ...file.path.split('/'));
      const stats = await lstat(source).catch(() => undefined);
      if (stats === undefined || !stats.isFile()) continue;
      const target = path.join(staging, ...file.path.split('/'));
      await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
      // COPYFILE_EXCL: never onto something that is already there (a planted link).
      await copyFile(source, target, constants.COPYFILE_EXCL);
      await chmod(target, file.executable ? 0o555 : 0o444);
    }
    signal.throwIfAborted();
    const destination = path.join(skills, skill.name);
    // rm removes a symbolic link itself, never what it points at.
    await rm(destination, { recursive: true, force: true });
    await rename(staging, destination).catch(async (error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      // Another turn of this agent installed the same files between the rm and the rename.
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      await rm(staging, { recursive: true, force: true });
    });
    return `${SKILLS_FOLDER}/${skill.name}`;
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}
