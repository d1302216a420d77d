import { pause } from '../concurrency/wait.js';
import type { TurnStore } from '../store/turn-store.js';
import type { StoredEvent } from '../store/turn-record.js';
import { TERMINAL_EVENT_TYPES } from '../events/turn-events.js';
import type { TurnRun } from './turn-run.js';

/** Where a consumer's events go. */
export interface EventSink {
  /** Takes one event; `false` when the consumer now holds as much as it may (it has fallen behind). */
  write(event: StoredEvent): boolean;
  /** Resolves when the consumer can take more again, or is gone. */
  drained(): Promise<void>;
}

/** A sink that keeps every event, for answers that hold them all anyway (JSON). */
export function collectingSink(): { readonly sink: EventSink; readonly events: StoredEvent[] } {
  const events: StoredEvent[] = [];
  return {
    events,
    sink: {
      write: (event) => {
        events.push(event);
        return true;
      },
      drained: () => Promise.resolve(),
    },
  };
}

const EVENT_PAGE = 500;
/** How often the store is asked for more while another replica runs the turn. */
const POLL_MS = 500;

/**
 * Delivers a turn's events after `afterSeq` to `sink`, never more than the sink can hold:
 * from the turn's in-memory window while the consumer keeps up with a turn that runs here,
 * from the store otherwise (a consumer that falls behind, a turn older than the window, a
 * turn on another replica, a turn that has ended). The store is the source of truth, and a
 * running turn delivers only what it has stored, so the consumer sees exactly the stored
 * sequence. Without `follow`, stops at what is stored now; with it, at the terminal event, when
 * the turn has ended (even if `afterSeq` was past its end), or when `signal` aborts.
 * `waitForMore` is how a follower waits for another replica's events (a poll by default).
 */
export async function followTurnEvents(options: {
  readonly store: TurnStore;
  readonly turnId: string;
  readonly afterSeq: number;
  readonly follow: boolean;
  readonly signal: AbortSignal;
  readonly sink: EventSink;
  /** The turn, while it runs in this process. */
  readonly localRun: () => TurnRun | undefined;
  /** True once the turn's record says it has ended. */
  readonly hasEnded: () => Promise<boolean>;
  readonly waitForMore?: (signal: AbortSignal) => Promise<void>;
}): Promise<{ readonly lastSeq: number; readonly ended: boolean }> {
  const { store, turnId, signal, sink } = options;
  // One object, not three variables: the listener below changes them between awaits.
  const state = { lastSeq: options.afterSeq, ended: false, full: false };
  /** Delivers one event; true when delivery must stop here (the end, or a full sink). */
  const deliver = (event: StoredEvent): boolean => {
    state.lastSeq = event.seq;
    if (TERMINAL_EVENT_TYPES.has(event.type)) state.ended = true;
    if (!sink.write(event)) state.full = true;
    return state.ended || state.full;
  };

  /** Set once the store was read after this process's run of the turn was over. */
  let readAfterLocalEnd = false;
  while (!state.ended && !signal.aborted) {
    if (state.full) {
      await untilOrAborted(sink.drained(), signal);
      state.full = false;
      continue;
    }
    const run = options.localRun();
    if (run !== undefined && !run.over && (await followLive(run))) continue;
    const overHere = run?.over === true;

    const page = await store.listEvents(turnId, { afterSeq: state.lastSeq, limit: EVENT_PAGE });
    let stopped = false;
    for (const event of page) {
      stopped = deliver(event);
      if (stopped) break;
    }
    if (stopped || page.length === EVENT_PAGE) continue;
    if (overHere) {
      // The run here is over; what the store holds now is all there will be.
      if (readAfterLocalEnd) break;
      readAfterLocalEnd = true;
      continue;
    }
    const running = options.localRun();
    if (running !== undefined) continue;
    if (!options.follow || (await options.hasEnded())) break;
    await (options.waitForMore ?? ((waitSignal: AbortSignal) => pause(POLL_MS, waitSignal)))(signal);
  }
  return { lastSeq: state.lastSeq, ended: state.ended };

  /**
   * Follows the run from memory until its end, the consumer falls behind, or the signal
   * aborts; false when the window no longer holds what comes after the last seq delivered.
   */
  async function followLive(run: TurnRun): Promise<boolean> {
    let wake: () => void = () => undefined;
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const detach = run.attach(state.lastSeq, (_event, stored) => {
      if (stored.seq <= state.lastSeq) return true;
      if (!deliver(stored)) return true;
      wake();
      return false;
    });
    if (detach === undefined) return false;
    if (!state.ended && !state.full) await untilOrAborted(Promise.race([run.done, woken]), signal);
    detach();
    // After run.done without the terminal event (its end was not stored, or `afterSeq` was past
    // it), the loop reads the store once more and then asks whether the turn has ended.
    return true;
  }
}

/** Waits for `promise` or for `signal` to abort, whichever is first; the abort listener is removed after, so a loop can wait many times on one signal. */
async function untilOrAborted(promise: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
