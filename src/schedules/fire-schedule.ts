import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { crashPoint } from '../durable/crash-points.js';
import type { TurnStore } from '../store/turn-store.js';
import { nextCronFire } from './cron-timing.js';
import { earlierFireState } from './earlier-fire-state.js';
import type { FirePayload } from './schedule-jobs.js';
import type { ScheduleStore } from './schedule-store.js';

/** A fire handled later than this after it was due counts as missed (the service was down). */
const MISSED_AFTER_MS = 5_000;

/**
 * Handles one delivery of a fire's job: claims the fire by moving the schedule's `next_fire_at`
 * on (compare and set), so a fire is claimed once however often its job is delivered. By the
 * schedule's `missed` and `overlap` policies the fire is recorded skipped, or recorded
 * `starting` with its turn's id and the job that starts the turn; the next fire's job is
 * written in the same transaction.
 */
export async function fireSchedule(options: {
  readonly payload: FirePayload;
  readonly schedules: ScheduleStore;
  readonly turnStore: TurnStore;
  readonly clock: Clock;
}): Promise<void> {
  const { payload, schedules, clock } = options;
  const row = await schedules.readRow(payload.scheduleId);
  if (row?.status !== 'active' || row.next_fire_at !== payload.dueAt || row.generation !== payload.generation) return;
  const now = clock.now();
  const due = new Date(payload.dueAt);
  const missed = now.getTime() - due.getTime() > MISSED_AFTER_MS;
  const next = row.kind === 'cron' ? nextCronFire({ expression: row.cron ?? '', timeZone: row.time_zone, after: new Date(Math.max(now.getTime(), due.getTime())) }) : null;
  const previous = await earlierFireState({ schedules, turnStore: options.turnStore, clock, scheduleId: row.id, beforeDueAt: payload.dueAt });
  // enqueue: at most one fire waits behind the running one; skip: none does.
  const overlaps = row.overlap === 'skip' ? previous !== 'idle' : previous === 'waiting';
  const outcome = missed && row.missed === 'skip' ? 'skipped_missed' : overlaps ? 'skipped_overlap' : 'starting';
  const claimed = await schedules.claimFire({
    scheduleId: row.id,
    generation: row.generation,
    dueAt: payload.dueAt,
    next: { next_fire_at: next?.toISOString() ?? null, status: next === null ? 'done' : 'active' },
    fire: { at: now.toISOString(), outcome, turn_id: outcome === 'starting' ? `turn_${randomUUID().replaceAll('-', '')}` : null },
  });
  if (claimed) crashPoint('schedule.fire-claimed');
}
