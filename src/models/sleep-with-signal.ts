import { setTimeout as delay } from 'node:timers/promises';

/** Waits `ms` milliseconds; rejects with the signal's own reason as soon as it aborts. */
export type AbortableSleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** The real timer-backed `AbortableSleep`. */
export const sleepWithSignal: AbortableSleep = async (ms, signal) => {
  try {
    await delay(ms, undefined, { signal });
  } catch (error) {
    // Node rejects with its own AbortError; callers expect the reason they aborted with.
    signal.throwIfAborted();
    throw error;
  }
};
