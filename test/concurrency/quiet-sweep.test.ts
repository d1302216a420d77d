import { describe, expect, it } from 'vitest';
import { QuietSweep, type QuietEntry } from '../../src/concurrency/quiet-sweep.js';

const PERIOD_MS = 50;

/** An entry that settles once `quietMs` have passed since it was made, spending `workMs` of CPU when it does. */
function entry(options: { quietMs: number; workMs?: number; log?: string[]; name?: string }): QuietEntry & { settledAt: number | undefined; asked: number } {
  const madeAt = performance.now();
  return {
    settledAt: undefined,
    asked: 0,
    settleIfQuiet(now) {
      this.asked += 1;
      if (now - madeAt < options.quietMs) return false;
      const until = performance.now() + (options.workMs ?? 0);
      while (performance.now() < until) {
        // busy, as deflating is
      }
      options.log?.push(options.name ?? '');
      this.settledAt = now;
      return true;
    },
  };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a quiet sweep', () => {
  it('settles an entry once it is quiet, then asks it no more', async () => {
    const sweep = new QuietSweep({ periodMs: PERIOD_MS, sliceMs: 5 });
    const quiet = entry({ quietMs: 2 * PERIOD_MS });
    sweep.watch(quiet);
    await wait(PERIOD_MS * 1.5);
    expect(quiet.settledAt).toBeUndefined();
    expect(quiet.asked).toBeGreaterThanOrEqual(1);
    await wait(PERIOD_MS * 2);
    expect(quiet.settledAt).toBeDefined();
    const asked = quiet.asked;
    expect(sweep.size).toBe(0);
    await wait(PERIOD_MS * 3);
    expect(quiet.asked).toBe(asked);
  });

  it('leaves an unwatched entry alone', async () => {
    const sweep = new QuietSweep({ periodMs: PERIOD_MS, sliceMs: 5 });
    const gone = entry({ quietMs: 0 });
    const kept = entry({ quietMs: 0 });
    sweep.watch(gone);
    sweep.watch(kept);
    sweep.unwatch(gone);
    await wait(PERIOD_MS * 3);
    expect(gone.asked).toBe(0);
    expect(kept.settledAt).toBeDefined();
  });

  it('works in slices: other work runs between entries once a slice has used its time', async () => {
    const sweep = new QuietSweep({ periodMs: PERIOD_MS, sliceMs: 5 });
    const log: string[] = [];
    const first = entry({ quietMs: 0, workMs: 8, log, name: 'a' });
    // While the first entry settles, something else asks for the event loop: it runs before the
    // next entry, not after the whole sweep.
    sweep.watch({
      settleIfQuiet: (now) => {
        setImmediate(() => log.push('other'));
        return first.settleIfQuiet(now);
      },
    });
    for (const name of ['b', 'c']) sweep.watch(entry({ quietMs: 0, workMs: 8, log, name }));
    await wait(PERIOD_MS * 3);
    expect(log).toEqual(['a', 'other', 'b', 'c']);
  });

  it('visits entries watched while a sweep is under way', async () => {
    const sweep = new QuietSweep({ periodMs: PERIOD_MS, sliceMs: 1 });
    const late = entry({ quietMs: 0 });
    const log: string[] = [];
    sweep.watch({
      settleIfQuiet: () => {
        const until = performance.now() + 3;
        while (performance.now() < until) {
          // a slice's worth
        }
        sweep.watch(late);
        log.push('first');
        return true;
      },
    });
    await wait(PERIOD_MS * 1.5);
    expect(log).toEqual(['first']);
    expect(late.settledAt).toBeDefined();
  });
});
