import type { EnqueueOptions } from '../durable/durable-work.js';
import type { ScheduleTables } from './schedule-tables.js';

export const FIRE_QUEUE = 'schedule-fire';
export const FIRE_START_QUEUE = 'schedule-fire-start';

/** A fire's durable job: the schedule, the due time it fires for, and the generation it was queued at. */
export interface FirePayload {
  readonly scheduleId: string;
  readonly dueAt: string;
  readonly generation: number;
}

/** The job of a claimed fire that starts its turn (and waits, by re-queueing itself, behind earlier fires). */
export interface FireStartPayload {
  readonly scheduleId: string;
  readonly dueAt: string;
  /** Starts already put off because the service was full or the agent busy (for the backoff). */
  readonly putOff?: number;
}

/** The schedule's next fire, due at its time, when it is active and has one (one job per generation and due time). */
export function fireJob(row: Pick<ScheduleTables['schedules'], 'id' | 'status' | 'next_fire_at' | 'generation'>): EnqueueOptions | undefined {
  if (row.status !== 'active' || row.next_fire_at === null) return undefined;
  const payload: FirePayload = { scheduleId: row.id, dueAt: row.next_fire_at, generation: row.generation };
  return { queue: FIRE_QUEUE, payload: { ...payload }, runAt: new Date(row.next_fire_at), singletonKey: `${row.id}:${payload.generation}:${payload.dueAt}` };
}

/** The job that starts a claimed fire's turn, now or at `runAt` (a fire waiting behind an earlier one looks again then). */
export function fireStartJob(payload: FireStartPayload, runAt?: Date): EnqueueOptions {
  return { queue: FIRE_START_QUEUE, payload: { ...payload }, ...(runAt === undefined ? {} : { runAt }) };
}
