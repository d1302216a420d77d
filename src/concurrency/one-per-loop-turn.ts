/**
 * Lets waiters go one per turn of the event loop, in order. For work that many callers start at
 * the same moment and that is better spread out than done in one go: between two waiters, the
 * loop polls for I/O, so what arrives meanwhile (another client leaving) is not held up behind
 * all of them. Process-wide on purpose, like the event loop it schedules on.
 */
const waiting: (() => void)[] = [];

export function onePerLoopTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (waiting.length === 1) setImmediate(releaseNext);
  });
}

function releaseNext(): void {
  waiting.shift()?.();
  if (waiting.length > 0) setImmediate(releaseNext);
}
