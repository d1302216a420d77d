import { ensureHomeRoom } from '../file-tool-options.js';
import type { HomeOwner } from '../home-fs/open-home-path.js';
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
 * every path resolved with `openHomePath`, every file read and every new content computed
 * in memory first; only if all of that succeeds is anything written (new and changed files
 * first, deletes last), and a write that fails midway is rolled back. The signal is honoured
 * until the first write; from then on the patch finishes or rolls back.
 *
 * Throws `PatchError` for a malformed patch and `PatchApplyError` for one that cannot be
 * applied; both messages say what to fix.
 */
export async function applyPatch(options: {
  home: string;
  patch: string;
  signal: AbortSignal;
  /** Who new files and folders belong to (the sandbox user when the service is root). */
  owner?: HomeOwner | undefined;
  /** What the whole home may hold (default 1 GiB); a patch that would go over it writes nothing. */
  homeMaxBytes?: number | undefined;
}): Promise<PatchSummary> {
  const { home, patch, signal } = options;
  signal.throwIfAborted();
  const { operations } = parsePatch(patch);
  const plan = await planPatch({ home, operations, signal });
  try {
    signal.throwIfAborted();
    const added = plan.writes.reduce((sum, write) => sum + Buffer.byteLength(write.content), 0);
    const replaced = plan.writes.reduce((sum, write) => sum + (write.original?.length ?? 0), 0) + plan.deletes.reduce((sum, planned) => sum + planned.original.length, 0);
    if (added > replaced) await ensureHomeRoom({ home, maxBytes: options.homeMaxBytes, addBytes: added, replacedBytes: replaced, display: 'the patch' });
    await commitPatchPlan({ plan, owner: options.owner });
  } finally {
    await plan.close();
  }
  return {
    changes: plan.changes,
    linesAdded: plan.changes.reduce((sum, change) => sum + change.added, 0),
    linesRemoved: plan.changes.reduce((sum, change) => sum + change.removed, 0),
  };
}
