import type { TortureResult } from './torture.js';

/** The torture's figures and violations as the lines `npm run torture` prints (and docs/faults.md quotes). */
export function formatReport(result: TortureResult): string[] {
  const { figures } = result;
  const items = Object.entries(figures.items)
    .map(([kind, count]) => `${kind} ${count.stored}/${count.planned} (${count.acknowledged} answered)`)
    .join(', ');
  const turnKinds = Object.entries(figures.turnsByKind)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(', ');
  const lines = [
    `== ${result.store}: seed ${result.seed}, ${result.rounds.length} rounds, ${result.kills.length} kills (kill -9 of a process group), wall ${(result.wallMs / 1000).toFixed(0)} s, settle ${(result.settleMs / 1000).toFixed(1)} s${result.settled ? '' : ' (timed out)'}, Node ${process.version}`,
    `work items stored/planned: ${items}`,
    `tasks ${figures.tasks}, job turns ${figures.jobTurns}, job messages ${figures.messages.stored} stored (${figures.messages.acknowledged} answered 202), fires started ${figures.firesStarted}; turns ${figures.turns} (${turnKinds}), ${figures.interruptedTurns} interrupted`,
    `ended: runs ${figures.ended.runs}, jobs ${figures.ended.jobs}, fires ${figures.ended.fires}, turns ${figures.ended.turns}`,
    `side effects: ${figures.markerLines} marker lines in agent homes, ${figures.taskMarkerHits} task marker fetches`,
    `webhooks: ${figures.webhooks.terminalSubjects} ended subjects with one, ${figures.webhooks.deliveries} deliveries received with ${figures.webhooks.deliveryIds} distinct ids`,
    `stuck rows: ${figures.stuck}`,
    `violations: ${result.violations.length}`,
  ];
  for (const violation of result.violations) {
    lines.push(`  ! ${violation.invariant} [seed ${result.seed}, round ${violation.round ?? '?'}] ${violation.item}: ${violation.detail}`);
  }
  if (result.keptAt !== undefined) lines.push(`data folder, logs${result.store === 'postgres' ? ' (and the schema)' : ''} kept in ${result.keptAt}`);
  return lines;
}
