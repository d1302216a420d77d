import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { SkillFile } from './skill-catalog.js';

/** Bounds on what a skill may bring besides SKILL.md; it is copied into each agent home that uses it. */
export const SKILL_FILES_LIMITS = { maxFiles: 500, maxTotalBytes: 32 * 1024 * 1024, maxDepth: 8 } as const;

export type SkillFilesOutcome = { readonly ok: true; readonly files: SkillFile[] } | { readonly ok: false; readonly problem: string };

/**
 * The regular files of a skill folder other than SKILL.md, sorted by path. Symbolic links are
 * left out (never followed: one could point at any file of the host), as are hidden entries
 * (`.git`, `.DS_Store`). More files, bytes or depth than `SKILL_FILES_LIMITS` is a problem.
 */
export async function listSkillFiles(folder: string): Promise<SkillFilesOutcome> {
  const files: SkillFile[] = [];
  let totalBytes = 0;
  const pending: { relative: string; depth: number }[] = [{ relative: '', depth: 0 }];
  while (pending.length > 0) {
    const current = pending.pop();
    if (current === undefined) break;
    const entries = await readdir(path.join(folder, current.relative), { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const relative = current.relative === '' ? entry.name : `${current.relative}/${entry.name}`;
      if (relative === 'SKILL.md') continue;
      if (entry.isDirectory()) {
        if (current.depth + 1 > SKILL_FILES_LIMITS.maxDepth) return { ok: false, problem: `its folders are nested deeper than ${SKILL_FILES_LIMITS.maxDepth} levels (${relative})` };
        pending.push({ relative, depth: current.depth + 1 });
        continue;
      }
      if (!entry.isFile()) continue;
      const stats = await lstat(path.join(folder, relative));
      totalBytes += stats.size;
      files.push({ path: relative, bytes: stats.size, executable: (stats.mode & 0o111) !== 0 });
      if (files.length > SKILL_FILES_LIMITS.maxFiles) return { ok: false, problem: `it has more than ${SKILL_FILES_LIMITS.maxFiles} files besides SKILL.md` };
      if (totalBytes > SKILL_FILES_LIMITS.maxTotalBytes) return { ok: false, problem: `its files take more than ${SKILL_FILES_LIMITS.maxTotalBytes / 1024 / 1024} MiB` };
    }
  }
  files.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
  return { ok: true, files };
}
