import type { Row } from './deployment.js';
import type { Snapshot, TurnMarker } from './snapshot.js';
import { eventBody, groupBy, integer, text } from './violations.js';

/** A snapshot's rows, grouped the ways the checks look them up. */
export interface SnapshotIndex {
  readonly snapshot: Snapshot;
  readonly runsByAgent: ReadonlyMap<string, Row[]>;
  readonly tasksByRun: ReadonlyMap<string, Row[]>;
  readonly workflowEventsByRun: ReadonlyMap<string, Row[]>;
  readonly jobsByAgent: ReadonlyMap<string, Row[]>;
  readonly jobTurnsByJob: ReadonlyMap<string, Row[]>;
  readonly jobMessagesByJob: ReadonlyMap<string, Row[]>;
  readonly jobEventsByJob: ReadonlyMap<string, Row[]>;
  readonly schedulesByAgent: ReadonlyMap<string, Row[]>;
  readonly firesBySchedule: ReadonlyMap<string, Row[]>;
  readonly turnsById: ReadonlyMap<string, Row>;
  readonly turnsByAgent: ReadonlyMap<string, Row[]>;
  readonly turnsByJob: ReadonlyMap<string, Row[]>;
  readonly turnsBySchedule: ReadonlyMap<string, Row[]>;
  readonly markersByTurn: ReadonlyMap<string, TurnMarker[]>;
  /** Task turn ids by `<runId>/<seq>`, from the idempotency keys the tasks' turns were admitted under. */
  readonly keyedTaskTurns: ReadonlyMap<string, string[]>;
  /** Marker URL hits by `<agentId>/<seq>`. */
  readonly hitsByTask: ReadonlyMap<string, number>;
}

export function indexSnapshot(snapshot: Snapshot): SnapshotIndex {
  const keyedTaskTurns = new Map<string, string[]>();
  for (const row of snapshot.idempotencyKeys) {
    const match = /^([^/]+)\/(\d+)\//.exec(text(row, 'key'));
    if (match === null) continue;
    const task = `${match[1] ?? ''}/${match[2] ?? ''}`;
    keyedTaskTurns.set(task, [...(keyedTaskTurns.get(task) ?? []), text(row, 'turn_id')]);
  }
  const hitsByTask = new Map<string, number>();
  for (const hit of snapshot.hits) {
    const task = `${hit.agentId}/${hit.seq}`;
    hitsByTask.set(task, (hitsByTask.get(task) ?? 0) + 1);
  }
  const turnsWith = (column: string) =>
    groupBy(
      snapshot.turns.filter((row) => text(row, column) !== ''),
      (row) => text(row, column),
    );
  return {
    snapshot,
    runsByAgent: groupBy(snapshot.runs, (row) => text(row, 'agent_id')),
    tasksByRun: groupBy(snapshot.tasks, (row) => text(row, 'run_id')),
    workflowEventsByRun: groupBy(snapshot.workflowEvents, (row) => text(row, 'run_id')),
    jobsByAgent: groupBy(snapshot.jobs, (row) => text(row, 'agent_id')),
    jobTurnsByJob: groupBy(snapshot.jobTurns, (row) => text(row, 'job_id')),
    jobMessagesByJob: groupBy(snapshot.jobMessages, (row) => text(row, 'job_id')),
    jobEventsByJob: groupBy(snapshot.jobEvents, (row) => text(row, 'job_id')),
    schedulesByAgent: groupBy(snapshot.schedules, (row) => text(row, 'agent_id')),
    firesBySchedule: groupBy(snapshot.fires, (row) => text(row, 'schedule_id')),
    turnsById: new Map(snapshot.turns.map((row) => [text(row, 'id'), row])),
    turnsByAgent: groupBy(snapshot.turns, (row) => text(row, 'agent_id')),
    turnsByJob: turnsWith('background_job_id'),
    turnsBySchedule: turnsWith('schedule_id'),
    markersByTurn: groupBy(snapshot.turnMarkers, (marker) => marker.turnId),
    keyedTaskTurns,
    hitsByTask,
  };
}

/** Times a turn was resumed after its process died (a later version's `resumes` column; 0 without it). */
export function resumesOf(turn: Row | undefined): number {
  return turn === undefined ? 0 : integer(turn, 'resumes');
}

/** The events of `rows` of one type, with their bodies. */
export function eventsOfType(rows: readonly Row[] | undefined, type: string): Readonly<Record<string, unknown>>[] {
  return (rows ?? []).filter((row) => text(row, 'type') === type).map((row) => eventBody(row));
}
