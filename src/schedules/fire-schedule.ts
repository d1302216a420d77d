import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { pause } from '../concurrency/wait.js';
import type { TurnStore } from '../store/turn-store.js';
import { nextCronFire } from './cron-timing.js';
import { earlierFireState } from './earlier-fire-state.js';
import type { FirePayload, ScheduleFireQueue } from './schedule-fire-queue.js';
import type { ScheduleStore } from './schedule-store.js';
import { startFireTurn, type ScheduleTurnStarter } from './start-fire-turn.js';

/** A fire handled later than this after it was due counts as missed (the service was down). */
const MISSED_AFTER_MS = 5_000;
const OVERLAP_POLL_MS = 500;

/**
 * Handles one delivery of a fire's job: claims the fire by moving the schedule's `next_fire_at`
 * on (compare and set), so a fire starts at most one turn however often its job is delivered;
 * queues the next fire; then, by the schedule's `missed` and `overlap` policies, skips the
 * fire or starts its turn.
 */
export async function fireSchedule(options: {
  readonly payload: FirePayload;
  readonly schedules: ScheduleStore;
  readonly fireQueue: ScheduleFireQueue;
  readonly turnStore: TurnStore;
  readonly turns: ScheduleTurnStarter | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Aborts when the service closes: a fire waiting behind earlier ones stops waiting. */
  readonly signal: AbortSignal;
}): Promise<void> {
  const { payload, schedules, clock } = options;
  const row = await schedules.readRow(payload.scheduleId);
  if (row?.status !== 'active' || row.next_fire_at !== payload.dueAt || row.generation !== payload.generation) return;
  const now = clock.now();
  const due = new Date(payload.dueAt);
  const missed = now.getTime() - due.getTime() > MISSED_AFTER_MS;
  const next = row.kind === 'cron' ? nextCronFire({ expression: row.cron ?? '', timeZone: row.time_zone, after: new Date(Math.max(now.getTime(), due.getTime())) }) : null;
  const earlier = () => earlierFireState({ schedules, turnStore: options.turnStore, clock, scheduleId: row.id, beforeDueAt: payload.dueAt });
  const previous = await earlier();
  // enqueue: at most one fire waits behind the running one; skip: none does.
  const overlaps = row.overlap === 'skip' ? previous !== 'idle' : previous === 'waiting';
  const outcome = missed && row.missed === 'skip' ? 'skipped_missed' : overlaps ? 'skipped_overlap' : 'starting';
  const claimed = await schedules.claimFire({
    scheduleId: row.id,
    generation: row.generation,
    dueAt: payload.dueAt,
    next: { next_fire_at: next?.toISOString() ?? null, status: next === null ? 'done' : 'active' },
    fire: { at: now.toISOString(), outcome },
  });
  if (!claimed) return;
  if (next !== null) await options.fireQueue.queue({ id: row.id, status: 'active', next_fire_at: next.toISOString(), generation: row.generation });
  if (outcome !== 'starting') return;
  // overlap "enqueue": this fire waits for the earlier ones to end, then starts.
  while (row.overlap === 'enqueue' && !options.signal.aborted && (await earlier()) !== 'idle') {
    // A waiting fire says it is alive, so a fire whose process died waiting stops blocking the ones after it.
    await schedules.touchFire({ scheduleId: row.id, dueAt: payload.dueAt, at: clock.now().toISOString() });
    await pause(OVERLAP_POLL_MS, options.signal);
  }
  await startFireTurn({ schedules, turns: options.turns, logger: options.logger, row, dueAt: payload.dueAt });
}
