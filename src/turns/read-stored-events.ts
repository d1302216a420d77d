import { pause } from '../concurrency/wait.js';
import type { StoredEvent, TurnStore } from '../store/turn-store.js';
import { TERMINAL_EVENT_TYPES } from './turn-events.js';

const EVENT_PAGE = 500;
const POLL_MS = 500;

/**
 * Delivers a turn's stored events after `afterSeq`, page by page. With `follow`, polls for
 * more until the terminal event (another replica is running the turn) or until `runsHere()`
 * says the turn has moved into this process, and returns the last seq delivered.
 */
export async function readStoredEvents(options: {
  readonly store: TurnStore;
  readonly turnId: string;
  readonly afterSeq: number;
  readonly follow: boolean;
  readonly signal: AbortSignal;
  readonly runsHere: () => boolean;
  readonly onEvent: (event: StoredEvent) => void;
  /** Waits before the next poll; by default `POLL_MS`. A store that signals new events returns earlier. */
  readonly waitForMore?: (pollMs: number, signal: AbortSignal) => Promise<void>;
}): Promise<{ readonly lastSeq: number; readonly ended: boolean }> {
  let lastSeq = options.afterSeq;
  for (;;) {
    const page = await options.store.listEvents(options.turnId, { afterSeq: lastSeq, limit: EVENT_PAGE });
    for (const event of page) {
      options.onEvent(event);
      lastSeq = event.seq;
      if (TERMINAL_EVENT_TYPES.has(event.type)) return { lastSeq, ended: true };
    }
    if (page.length === EVENT_PAGE) continue;
    if (!options.follow || options.signal.aborted || options.runsHere()) return { lastSeq, ended: false };
    await (options.waitForMore === undefined ? pause(POLL_MS, options.signal) : options.waitForMore(POLL_MS, options.signal));
  }
}
