import type { Clock } from '../clock.js';
import type { TurnStore } from '../store/turn-store.js';
import type { ScheduleStore } from './schedule-store.js';

const STARTING_STALE_MS = 60_000;

/** Whether an earlier fire of the schedule still runs its turn, or waits to start one. */
export async function earlierFireState(options: {
  readonly schedules: ScheduleStore;
  readonly turnStore: TurnStore;
  readonly clock: Clock;
  readonly scheduleId: string;
  readonly beforeDueAt: string;
}): Promise<'idle' | 'running' | 'waiting'> {
  const fires = await options.schedules.listEarlierActiveFires({ scheduleId: options.scheduleId, beforeDueAt: options.beforeDueAt });
  for (const fire of fires) {
    // Starting a turn takes moments: one "starting" for long was left by a process that died.
    if (fire.outcome === 'starting' && new Date(fire.at).getTime() > options.clock.now().getTime() - STARTING_STALE_MS) return 'waiting';
    // Not ended yet (running, or waiting behind the agent's other turns).
    if (fire.turn_id !== null && (await options.turnStore.getTurn(fire.turn_id))?.finishedAt === null) return 'running';
  }
  return 'idle';
}
