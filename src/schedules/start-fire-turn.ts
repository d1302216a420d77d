import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { crashPoint } from '../durable/crash-points.js';
import { ServiceError } from '../service-error.js';
import type { TurnStore } from '../store/turn-store.js';
import type { StartTurnRequest } from '../turns/turn-origin.js';
import type { StartTurnOptions, TurnSubmission } from '../turns/turn-service.js';
import { workRequestSchema } from '../turns/work-request.js';
import { earlierFireState } from './earlier-fire-state.js';
import type { FireStartPayload } from './schedule-jobs.js';
import type { ScheduleStore } from './schedule-store.js';

/** Starts turns: the turn service, seen from a schedule. */
export interface ScheduleTurnStarter {
  submitTurn(request: StartTurnRequest, options: StartTurnOptions): Promise<TurnSubmission>;
}

/** How often a fire waiting behind an earlier fire's turn (overlap "enqueue") looks again. */
const OVERLAP_POLL_MS = 1_000;
/** A start the service put off (full, or the agent busy) is tried again after 1 s, 2 s, 4 s … at most a minute, */
const PUT_OFF_MAX_MS = 60_000;
/** … this many times (about 11 minutes in all); then the fire is recorded failed. */
const PUT_OFF_LIMIT = 15;

/**
 * Handles one delivery of a claimed fire's start job: starts its turn under the id recorded when
 * the fire was claimed and the idempotency key (schedule, due time), so a delivery after a crash
 * finds the turn instead of starting a second, then records the fire `started`. A fire behind an
 * earlier one's turn (overlap "enqueue"), or one the service puts off (`overloaded`,
 * `agent_busy`), has its job look again later, with backoff, and holds no handler meanwhile.
 */
export async function startFireTurn(options: {
  readonly start: FireStartPayload;
  readonly schedules: ScheduleStore;
  readonly turnStore: TurnStore;
  /** Undefined until the service is started. */
  readonly turns: ScheduleTurnStarter | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}): Promise<void> {
  const { start, schedules, clock } = options;
  const { scheduleId, dueAt } = start;
  const [row, fire] = await Promise.all([schedules.readRow(scheduleId), schedules.readFire({ scheduleId, dueAt })]);
  if (row === undefined || fire?.outcome !== 'starting' || fire.turn_id === null) return;
  const turnId = fire.turn_id;
  if (row.overlap === 'enqueue' && (await earlierFireState({ schedules, turnStore: options.turnStore, clock, scheduleId, beforeDueAt: dueAt })) !== 'idle') {
    await schedules.putOffFire({ start, at: clock.now().toISOString(), runAt: new Date(clock.now().getTime() + OVERLAP_POLL_MS) });
    return;
  }
  try {
    const turns = options.turns;
    if (turns === undefined) throw new Error('the schedule service was not started');
    const request = workRequestSchema.parse(JSON.parse(row.request_json));
    await turns.submitTurn(
      {
        agent: request.agent,
        kind: 'text',
        input: row.prompt,
        model: request.model,
        ...(request.webhook === undefined ? {} : { webhook: request.webhook }),
        origin: { scheduleId },
      },
      { turnId, idempotency: { scope: 'schedule-fire', key: `${scheduleId}/${dueAt}` } },
    );
    crashPoint('schedule.fire-turn-started');
    await schedules.markFireStarted({ scheduleId, dueAt });
  } catch (error) {
    const putOff = start.putOff ?? 0;
    if (error instanceof ServiceError && (error.code === 'overloaded' || error.code === 'agent_busy') && putOff < PUT_OFF_LIMIT) {
      const delayMs = Math.min(PUT_OFF_MAX_MS, 1_000 * 2 ** putOff);
      await schedules.putOffFire({ start: { scheduleId, dueAt, putOff: putOff + 1 }, at: clock.now().toISOString(), runAt: new Date(clock.now().getTime() + delayMs) });
      return;
    }
    // A shutdown is not the fire's fault: the job comes back on another worker or the next start.
    if (error instanceof ServiceError && error.code === 'shutting_down') throw error;
    const message = error instanceof Error ? error.message : String(error);
    if (!(error instanceof ServiceError)) options.logger.error({ err: error, scheduleId }, 'a schedule fire could not start its turn');
    const why = error instanceof ServiceError && (error.code === 'overloaded' || error.code === 'agent_busy') ? `${message} (put off ${PUT_OFF_LIMIT} times)` : message;
    await schedules.markFireFailed({ scheduleId, dueAt, error: why.slice(0, 2_000) });
  }
}
