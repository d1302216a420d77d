import type { TurnStatus } from '../store/turn-record.js';

const ENDED: ReadonlySet<string> = new Set<TurnStatus>(['completed', 'failed', 'cancelled', 'interrupted']);

/** True for the statuses of a turn that has ended for good (its terminal event is stored). */
export function isEndedStatus(status: string): boolean {
  return ENDED.has(status);
}
