import { commitPatchPlan } from './commit-patch-plan.js';
import { parsePatch } from './parse-patch.js';
import { planPatch, type PatchFileChange } from './plan-patch.js';

/** What a patch changed, file by file in patch order, with the lines added and removed. */
export interface PatchSummary {
  readonly changes: readonly PatchFileChange[];
  readonly linesAdded: number;
  readonly linesRemoved: number;
}

/**
 * Applies a Codex-format patch inside the agent home, all or nothing: the patch is parsed,
 * every path resolved with `resolveHomePath`, every file read and every new content computed
 * in memory first; only if all of that succeeds is anything written (new and changed files
 * first, deletes last), and a write that fails midway is rolled back. The signal is honoured
 * until the first write; from then on the patch finishes or rolls back.
 *
 * Throws `PatchError` for a malformed patch and `PatchApplyError` for one that cannot be
 * applied; both messages say what to fix.
 */
export async function applyPatch(options: { home: string; patch: string; signal: AbortSignal }): Promise<PatchSummary> {
  const { home, patch, signal } = options;
  signal.throwIfAborted();
  const { operations } = parsePatch(patch);
  const plan = await planPatch({ home, operations, signal });
  signal.throwIfAborted();
  await commitPatchPlan({ plan });
  return {
    changes: plan.changes,
    linesAdded: plan.changes.reduce((sum, change) => sum + change.added, 0),
    linesRemoved: plan.changes.reduce((sum, change) => sum + change.removed, 0),
  };
}
