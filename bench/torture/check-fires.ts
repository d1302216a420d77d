import { checkTurnSideEffects } from './check-side-effects.js';
import { describeTurns, theRecord } from './check-work.js';
import type { SnapshotIndex } from './snapshot-index.js';
import { optionalText, TERMINAL_TURN, text, type ItemRecord, type Violations } from './violations.js';

/**
 * A schedule: no fire left `starting` or `failed`; a once schedule `done` after exactly one
 * started fire, a cron one paused (the torture pauses it); every started fire has its own turn,
 * and the schedule's turns are exactly its fires' turns (none started twice), all ended.
 */
export function checkSchedule(index: SnapshotIndex, item: ItemRecord, violations: Violations): void {
  const schedule = theRecord(index.schedulesByAgent.get(item.agentId), item, violations);
  if (schedule === undefined) return;
  const scheduleId = text(schedule, 'id');
  const status = text(schedule, 'status');
  const fires = index.firesBySchedule.get(scheduleId) ?? [];
  const starting = fires.filter((fire) => text(fire, 'outcome') === 'starting');
  if (starting.length > 0) violations.add('not-terminal', item.agentId, `schedule ${scheduleId} has fires still starting, due ${starting.map((fire) => text(fire, 'due_at')).join(', ')}`);
  for (const fire of fires.filter((row) => text(row, 'outcome') === 'failed')) violations.add('unexpected-outcome', item.agentId, `the fire of ${scheduleId} due ${text(fire, 'due_at')} failed: ${text(fire, 'error')}`);
  const started = fires.filter((fire) => text(fire, 'outcome') === 'started');
  if (item.kind === 'once') {
    if (status !== 'done') violations.add('not-terminal', item.agentId, `once schedule ${scheduleId} is ${status}`);
    if (started.length !== 1) violations.add(started.length === 0 ? 'never-fired' : 'fired-twice', item.agentId, `once schedule ${scheduleId} has ${started.length} started fires`);
  } else if (status !== 'paused') {
    violations.add('not-terminal', item.agentId, `cron schedule ${scheduleId} is ${status} (the torture pauses it before it settles)`);
  }
  const fireTurnIds = started.flatMap((fire) => {
    const turnId = optionalText(fire, 'turn_id');
    if (turnId === undefined) violations.add('fire-without-turn', item.agentId, `the started fire of ${scheduleId} due ${text(fire, 'due_at')} names no turn`);
    return turnId === undefined ? [] : [turnId];
  });
  if (new Set(fireTurnIds).size !== fireTurnIds.length) violations.add('fire-turn-twice', item.agentId, `two fires of ${scheduleId} name one turn: ${fireTurnIds.join(', ')}`);
  const ran = index.turnsBySchedule.get(scheduleId) ?? [];
  const known = new Set(fireTurnIds);
  const extra = ran.filter((turn) => !known.has(text(turn, 'id')));
  if (extra.length > 0) violations.add('fire-turn-twice', item.agentId, `turns of ${scheduleId} that no fire names (a fire started twice?): ${describeTurns(extra)}`);
  const ranIds = new Set(ran.map((turn) => text(turn, 'id')));
  const missing = fireTurnIds.filter((turnId) => !ranIds.has(turnId));
  if (missing.length > 0) violations.add('fire-turn-missing', item.agentId, `started fires of ${scheduleId} whose turn does not exist: ${missing.join(', ')}`);
  const open = ran.filter((turn) => !TERMINAL_TURN.has(text(turn, 'status')));
  if (open.length > 0) violations.add('not-terminal', item.agentId, `fire turns of ${scheduleId} still open: ${describeTurns(open)}`);
  checkTurnSideEffects({ index, violations, item: item.agentId, turns: ran, lines: index.snapshot.markers.get(item.agentId) ?? [], expectsMarker: () => true });
}

/** A plain turn with a webhook: stored once, ended, and its marker command ran at most once (exactly once if it completed). */
export function checkPlainTurn(index: SnapshotIndex, item: ItemRecord, violations: Violations): void {
  const turns = index.turnsByAgent.get(item.agentId) ?? [];
  const turn = theRecord(turns, item, violations);
  if (turn === undefined) return;
  if (!TERMINAL_TURN.has(text(turn, 'status'))) violations.add('not-terminal', item.agentId, `turn ${text(turn, 'id')} is ${text(turn, 'status')}`);
  const lines = index.snapshot.markers.get(item.agentId) ?? [];
  if (lines.length > turns.length) violations.add('turn-side-effect-twice', item.agentId, `${lines.length} marker lines from ${turns.length} turn(s): ${describeTurns(turns)}`);
  checkTurnSideEffects({ index, violations, item: item.agentId, turns, lines, expectsMarker: () => true });
}
