/** Time, injectable so tests and benchmarks are deterministic. */
export interface Clock {
  /** Wall-clock time, for timestamps. */
  now(): Date;
  /** Monotonic milliseconds, for durations and timeouts. */
  monotonicMs(): number;
}

export const systemClock: Clock = {
  now: () => new Date(),
  monotonicMs: () => performance.now(),
};
