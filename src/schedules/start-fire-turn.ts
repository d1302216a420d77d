import type { Logger } from 'pino';
import { ServiceError } from '../service-error.js';
import type { StartTurnRequest } from '../turns/turn-origin.js';
import type { TurnRun } from '../turns/turn-run.js';
import { workRequestSchema } from '../turns/work-request.js';
import type { ScheduleStore } from './schedule-store.js';
import type { ScheduleTables } from './schedule-tables.js';

/** Starts turns: the turn service, seen from a schedule. */
export interface ScheduleTurnStarter {
  startTurn(request: StartTurnRequest): Promise<TurnRun>;
}

/** Starts the turn of a claimed fire with the schedule's prompt, and records the turn or why it could not start. */
export async function startFireTurn(options: {
  readonly schedules: ScheduleStore;
  /** Undefined until the service is started. */
  readonly turns: ScheduleTurnStarter | undefined;
  readonly logger: Logger;
  readonly row: ScheduleTables['schedules'];
  readonly dueAt: string;
}): Promise<void> {
  const { row, dueAt } = options;
  try {
    const turns = options.turns;
    if (turns === undefined) throw new Error('the schedule service was not started');
    const request = workRequestSchema.parse(JSON.parse(row.request_json));
    const run = await turns.startTurn({
      agent: request.agent,
      kind: 'text',
      input: row.prompt,
      model: request.model,
      ...(request.webhook === undefined ? {} : { webhook: request.webhook }),
      origin: { scheduleId: row.id },
    });
    await options.schedules.markFireStarted({ scheduleId: row.id, dueAt, turnId: run.id });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (!(error instanceof ServiceError)) options.logger.error({ err: error, scheduleId: row.id }, 'a schedule fire could not start its turn');
    await options.schedules.markFireFailed({ scheduleId: row.id, dueAt, error: message.slice(0, 2_000) });
  }
}
