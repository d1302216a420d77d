import { describe, expect, it, vi } from 'vitest';
import { abortTogether, untilAbortsSettle } from '../../src/concurrency/abort-together.js';

const turnOfTheLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('abortTogether', () => {
  it('aborts everything asked for in one turn of the event loop in one go, after the I/O already due', async () => {
    const log: string[] = [];
    const controllers = ['a', 'b', 'c'].map((name) => {
      const controller = new AbortController();
      controller.signal.addEventListener('abort', () => {
        log.push(`abort ${name}`);
        queueMicrotask(() => log.push(`unwind ${name}`));
      });
      return controller;
    });
    for (const controller of controllers) abortTogether(controller, new Error('gone'));
    log.push('asked');
    expect(controllers.some((controller) => controller.signal.aborted)).toBe(false);
    await turnOfTheLoop();
    expect(log).toEqual(['asked', 'abort a', 'abort b', 'abort c', 'unwind a', 'unwind b', 'unwind c']);
    expect((controllers[0]?.signal.reason as Error).message).toBe('gone');
  });
});

describe('untilAbortsSettle', () => {
  it('lets the unwinding go on only once the departures have stopped for 2 ms', async () => {
    const log: { what: string; at: number }[] = [];
    const note = (what: string): void => {
      log.push({ what, at: performance.now() });
    };
    const waiting = untilAbortsSettle().then(() => {
      note('unwinding');
    });
    // Departures keep coming, one per turn of the event loop, for a while after the wait began.
    for (let round = 0; round < 5; round += 1) {
      const controller = new AbortController();
      controller.signal.addEventListener('abort', () => {
        note(`abort ${round}`);
      });
      abortTogether(controller, new Error('gone'));
      await turnOfTheLoop();
    }
    await waiting;
    expect(log.map((entry) => entry.what)).toEqual(['abort 0', 'abort 1', 'abort 2', 'abort 3', 'abort 4', 'unwinding']);
    const [lastAbort, unwinding] = log.slice(-2);
    expect((unwinding?.at ?? 0) - (lastAbort?.at ?? 0)).toBeGreaterThanOrEqual(1.9);
  });

  it('counts a departure read in the turn of the event loop where the quiet period ends', async () => {
    const log: string[] = [];
    const waiting = untilAbortsSettle().then(() => log.push('unwinding'));
    // Due with the wait's own 2 ms timer, and after it in the same timers phase: as a socket's end
    // is read in the poll after that phase, on a machine busy enough that the service did not run
    // for those 2 ms.
    setTimeout(() => {
      const controller = new AbortController();
      controller.signal.addEventListener('abort', () => log.push('abort'));
      abortTogether(controller, new Error('gone'));
    }, 2);
    await waiting;
    expect(log).toEqual(['abort', 'unwinding']);
  });

  it('waits at most 30 ms while departures never stop', async () => {
    const started = performance.now();
    let settledAt: number | undefined;
    void untilAbortsSettle().then(() => {
      settledAt = performance.now();
    });
    let aborts = 0;
    // A generous cap only so that a wait that never ends fails instead of spinning.
    while (settledAt === undefined && performance.now() - started < 10_000) {
      abortTogether(new AbortController(), new Error('gone'));
      aborts += 1;
      await turnOfTheLoop();
    }
    expect(settledAt).toBeDefined();
    expect((settledAt ?? 0) - started).toBeGreaterThanOrEqual(29);
    expect(aborts).toBeGreaterThan(1);
  });

  it('waits one quiet period, and no more, when nobody is leaving', async () => {
    // Counted in quiet-period timers, not in milliseconds, which a loaded machine stretches.
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      const started = performance.now();
      await Promise.all([untilAbortsSettle(), untilAbortsSettle()]);
      const waited = performance.now() - started;
      // The 2 ms timer counts from libuv's loop time, which is whole milliseconds taken at the top of
      // the loop's turn: it may fire up to 1 ms sooner than performance.now() says (1.69 ms was seen).
      expect(waited).toBeGreaterThanOrEqual(1);
      // One 2 ms timer, shared by both waiters, let them both go.
      expect(timers.mock.calls.filter(([, delay]) => delay === 2)).toHaveLength(1);
    } finally {
      timers.mockRestore();
    }
  });
});
