import type { Row } from './deployment.js';
import type { MarkerLine } from './snapshot.js';
import { resumesOf, type SnapshotIndex } from './snapshot-index.js';
import { text, type Violations } from './violations.js';

/**
 * The side effects of one item's main turns (a job's, a schedule's fires', a plain turn): each
 * line in the agent home's markers.log was written by one run of the marker command. A turn's
 * stored `run_command` output names the line it wrote; a line no output names came from a turn
 * the kill cut off after the command ran and before its result was stored.
 *
 * - No turn wrote two lines (one turn id ran its command twice).
 * - Every line a stored output names is in the file.
 * - A completed turn whose script has the command wrote exactly one line (unless it was resumed).
 * - Lines no output names are no more than the turns that did not complete and name none
 *   (each such turn may have written one before the kill), plus the resumes.
 */
export function checkTurnSideEffects(options: {
  readonly index: SnapshotIndex;
  readonly violations: Violations;
  readonly item: string;
  readonly turns: readonly Row[];
  readonly lines: readonly MarkerLine[];
  /** Whether the turn's script runs the marker command (a job turn past the script's end does not). */
  readonly expectsMarker: (turn: Row) => boolean;
}): void {
  const { index, violations, item, turns, lines } = options;
  const inFile = new Map<string, number>();
  for (const line of lines) inFile.set(line.nonce, (inFile.get(line.nonce) ?? 0) + 1);
  for (const [nonce, count] of inFile) if (count > 1) violations.add('side-effect-twice', item, `the marker line ${nonce} is in markers.log ${count} times`);

  const attributed = new Set<string>();
  let allowance = 0;
  for (const turn of turns) {
    const turnId = text(turn, 'id');
    const written = index.markersByTurn.get(turnId) ?? [];
    const nonces = new Set(written.map((marker) => marker.nonce));
    for (const nonce of nonces) attributed.add(nonce);
    if (nonces.size > 1) {
      violations.add('turn-side-effect-twice', item, `turn ${turnId} (${text(turn, 'status')}) ran its marker command ${nonces.size} times: ${written.map((marker) => `${marker.callId}→${marker.nonce}`).join(', ')}`);
    }
    for (const nonce of nonces) if (!inFile.has(nonce)) violations.add('side-effect-missing', item, `turn ${turnId}'s output names marker ${nonce}, which is not in markers.log`);
    const resumes = resumesOf(turn);
    allowance += resumes;
    if (text(turn, 'status') === 'completed') {
      if (nonces.size === 0 && resumes === 0 && options.expectsMarker(turn)) violations.add('side-effect-missing', item, `turn ${turnId} completed without its marker command's output`);
    } else if (nonces.size === 0) {
      allowance += 1;
    }
  }
  const unattributed = lines.filter((line) => !attributed.has(line.nonce));
  if (unattributed.length > allowance) {
    violations.add(
      'side-effect-unaccounted',
      item,
      `${unattributed.length} marker lines no stored turn output names (${unattributed.map((line) => `${line.tag} ${line.nonce}`).join(', ')}), but only ${allowance} cut-off turns could have written them; turns: ${turns.map((turn) => `${text(turn, 'id')}:${text(turn, 'status')}`).join(', ') || 'none'}`,
    );
  }
}
