import type { PatchSummary } from './apply-patch.js';
import type { PatchFileChange } from './plan-patch.js';

/**
 * One sentence for the model and the person: "Updated src/app.ts (+3 −1), added docs/new.md
 * (+12), moved a.ts to b.ts, deleted old.txt (−40)".
 */
export function formatPatchSummary(summary: PatchSummary): string {
  const sentence = summary.changes.map(describeChange).join(', ');
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/** "(+3 −1)", "(+12)", "(−40)", or '' when no line changed. */
export function formatLineCounts(counts: { added: number; removed: number }): string {
  const parts = [counts.added > 0 ? `+${counts.added}` : '', counts.removed > 0 ? `−${counts.removed}` : ''].filter((part) => part !== '');
  return parts.length === 0 ? '' : `(${parts.join(' ')})`;
}

function describeChange(change: PatchFileChange): string {
  const counts = formatLineCounts(change);
  const suffix = counts === '' ? '' : ` ${counts}`;
  switch (change.operation) {
    case 'add':
      return `added ${change.path}${counts === '' ? ' (empty)' : suffix}`;
    case 'update':
      return `updated ${change.path}${counts === '' ? ' (no lines changed)' : suffix}`;
    case 'move':
      return `moved ${change.path} to ${change.movedTo ?? '?'}${suffix}`;
    case 'delete':
      return `deleted ${change.path}${suffix}`;
  }
}
