import { rmdir, unlink } from 'node:fs/promises';
import { describeFileError } from '../describe-file-error.js';
import type { HomeOwner } from '../home-fs/open-home-path.js';
import { writeHomeFile } from '../home-fs/write-home-file.js';
import { PatchApplyError } from './patch-apply-error.js';
import type { PatchPlan, PlannedWrite } from './plan-patch.js';

interface UndoStep {
  readonly display: string;
  readonly run: () => Promise<void>;
}

/**
 * Writes a computed plan: every new or changed file through a temporary file in its own
 * folder (creating missing folders one by one through descriptors), then every delete; all
 * by names inside folders held open since the plan, so no path can be swapped meanwhile. A new file is put in place with
 * `link`, which fails rather than overwrite something created meanwhile; a changed file is
 * renamed over the old one. If any step fails, the steps already done are undone from the
 * in-memory originals, newest first, and the error says so (and names anything that could
 * not be put back). Not cancellable: once the first write has started it finishes or rolls back.
 */
export async function commitPatchPlan(options: { plan: PatchPlan; owner?: HomeOwner | undefined }): Promise<void> {
  const { plan, owner } = options;
  const undo: UndoStep[] = [];
  let failed = { verb: 'write', display: '' };
  try {
    for (const write of plan.writes) {
      failed = { verb: 'write', display: write.display };
      await performWrite({ write, undo, owner });
    }
    for (const planned of plan.deletes) {
      failed = { verb: 'delete', display: planned.display };
      await unlink(planned.target.entry);
      undo.push({
        display: planned.display,
        run: () => writeHomeFile({ target: planned.target, content: planned.original, how: 'replace', mode: planned.mode, owner }),
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

async function performWrite(options: { write: PlannedWrite; undo: UndoStep[]; owner: HomeOwner | undefined }): Promise<void> {
  const { write, undo, owner } = options;
  const { target } = write;
  const created = await target.createFolders(owner);
  if (created.length > 0) {
    undo.push({
      display: write.display,
      run: async () => {
        // Deepest first; a folder something else was put in meanwhile stays.
        for (const { folder, name } of [...created].reverse()) {
          await rmdir(folder.entry(name)).catch((error: unknown) => {
            if (errorCode(error) !== 'ENOTEMPTY' && errorCode(error) !== 'ENOENT') throw error;
          });
        }
      },
    });
  }
  if (write.original === undefined) {
    await writeHomeFile({ target, content: write.content, how: 'create', mode: write.mode, owner });
    undo.push({ display: write.display, run: () => unlink(target.entry) });
  } else {
    const original = write.original;
    await writeHomeFile({ target, content: write.content, how: 'replace', mode: write.mode, owner });
    undo.push({ display: write.display, run: () => writeHomeFile({ target, content: original, how: 'replace', mode: write.mode, owner }) });
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

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
