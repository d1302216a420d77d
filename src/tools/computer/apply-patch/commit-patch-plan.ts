import { randomUUID } from 'node:crypto';
import { link, lstat, mkdir, open, rename, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { describeFileError } from '../describe-file-error.js';
import { PatchApplyError } from './patch-apply-error.js';
import type { PatchPlan, PlannedWrite } from './plan-patch.js';

interface UndoStep {
  readonly display: string;
  readonly run: () => Promise<void>;
}

/** Errors of `link` that mean "this file system has no hard links", not "something is there". */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS']);

/**
 * Writes a computed plan: every new or changed file through a temporary file in its own
 * folder (creating missing folders), then every delete. A new file is put in place with
 * `link`, which fails rather than overwrite something created meanwhile; a changed file is
 * renamed over the old one. If any step fails, the steps already done are undone from the
 * in-memory originals, newest first, and the error says so (and names anything that could
 * not be put back). Not cancellable: once the first write has started it finishes or rolls back.
 */
export async function commitPatchPlan(options: { plan: PatchPlan }): Promise<void> {
  const { plan } = options;
  const undo: UndoStep[] = [];
  let failed = { verb: 'write', display: '' };
  try {
    for (const write of plan.writes) {
      failed = { verb: 'write', display: write.display };
      await performWrite(write, undo);
    }
    for (const planned of plan.deletes) {
      failed = { verb: 'delete', display: planned.display };
      await unlink(planned.absolute);
      undo.push({
        display: planned.display,
        run: () => replaceFile({ absolute: planned.absolute, content: planned.original, mode: planned.mode }),
      });
    }
  } catch (error) {
    const reason = describeFileError(error, failed.display).message;
    const written = new Set(undo.map((step) => step.display)).size;
    const unrestored = await rollBack(undo);
    const outcome =
      unrestored.length > 0
        ? `Rolling back failed for ${unrestored.join('; ')}: check these files before retrying.`
        : written === 0
          ? 'Nothing had been written yet; nothing was changed.'
          : `The ${written === 1 ? 'file' : `${written} files`} already written ${written === 1 ? 'was' : 'were'} restored; nothing was changed.`;
    throw new PatchApplyError({ path: failed.display, message: `could not ${failed.verb} ${failed.display}: ${reason}. ${outcome}` });
  }
}

async function performWrite(write: PlannedWrite, undo: UndoStep[]): Promise<void> {
  const folder = path.dirname(write.absolute);
  const firstCreated = await mkdir(folder, { recursive: true });
  if (firstCreated !== undefined) {
    undo.push({ display: write.display, run: () => removeCreatedFolders({ deepest: folder, first: firstCreated }) });
  }
  if (write.original === undefined) {
    await createFile({ absolute: write.absolute, content: write.content, mode: write.mode });
    undo.push({ display: write.display, run: () => unlink(write.absolute) });
  } else {
    const original = write.original;
    await replaceFile({ absolute: write.absolute, content: write.content, mode: write.mode });
    undo.push({ display: write.display, run: () => replaceFile({ absolute: write.absolute, content: original, mode: write.mode }) });
  }
}

/** Runs the undo steps newest first; returns "path (reason)" for each that failed. */
async function rollBack(undo: readonly UndoStep[]): Promise<string[]> {
  const failures: string[] = [];
  for (const step of [...undo].reverse()) {
    try {
      await step.run();
    } catch (error) {
      failures.push(`${step.display} (${describeFileError(error, step.display).message})`);
    }
  }
  return failures;
}

async function createFile(options: { absolute: string; content: string | Buffer; mode: number | undefined }): Promise<void> {
  const temporary = await writeTemporary(options);
  try {
    try {
      await link(temporary, options.absolute);
    } catch (error) {
      if (!NO_HARD_LINKS.has(errorCode(error) ?? '')) throw error;
      const existing = await lstat(options.absolute).catch(() => undefined);
      if (existing !== undefined) throw Object.assign(new Error('already exists'), { code: 'EEXIST' });
      await rename(temporary, options.absolute);
    }
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

async function replaceFile(options: { absolute: string; content: string | Buffer; mode: number | undefined }): Promise<void> {
  const temporary = await writeTemporary(options);
  try {
    await rename(temporary, options.absolute);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/** Writes and flushes a temporary file beside `absolute` (same file system, so renames are atomic). */
async function writeTemporary(options: { absolute: string; content: string | Buffer; mode: number | undefined }): Promise<string> {
  // Not named after the target: a long file name plus a suffix could exceed NAME_MAX.
  const temporary = path.join(path.dirname(options.absolute), `.apply-patch-${randomUUID()}.tmp`);
  const handle = await open(temporary, 'wx', 0o644);
  try {
    if (options.mode !== undefined) await handle.chmod(options.mode);
    await handle.writeFile(options.content);
    await handle.sync();
    await handle.close();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  return temporary;
}

/** Removes the folders `mkdir` created, deepest first, leaving any that are not empty. */
async function removeCreatedFolders(options: { deepest: string; first: string }): Promise<void> {
  const relative = path.relative(options.first, options.deepest);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return;
  for (let folder = options.deepest; ; folder = path.dirname(folder)) {
    try {
      await rmdir(folder);
    } catch (error) {
      if (errorCode(error) !== 'ENOTEMPTY' && errorCode(error) !== 'ENOENT') throw error;
    }
    if (folder === options.first || path.dirname(folder) === folder) return;
  }
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
