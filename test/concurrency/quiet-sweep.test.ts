import { describe, expect, it } from 'vitest';
import { QuietSweep, type QuietEntry } from '../../src/concurrency/quiet-sweep.js';
import { waitUntil } from '../support/wait-until.js';

const PERIOD_MS = 50;

/**
 * An entry that settles once it is `quiet` (from the start unless told), spending `workMs` of CPU
 * when it does. The test says when it is quiet, so no verdict hangs on how late a timer ran.
 */
function entry(options: { quiet?: boolean; workMs?: number; log?: string[]; name?: string }): QuietEntry & { quiet: boolean; settledAt: number | undefined; asked: number } {
  return {
    quiet: options.quiet ?? true,
    settledAt: undefined,
    asked: 0,
    settleIfQuiet(now) {
      this.asked += 1;
      if (!this.quiet) return false;
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
    const quiet = entry({ quiet: false });
    sweep.watch(quiet);
    await waitUntil('a sweep to ask the entry', () => (quiet.asked >= 2 ? true : undefined));
    expect(quiet.settledAt).toBeUndefined();
    expect(sweep.size).toBe(1);
    quiet.quiet = true;
    await waitUntil('a sweep to settle the entry', () => quiet.settledAt);
    const asked = quiet.asked;
    expect(sweep.size).toBe(0);
    await wait(PERIOD_MS * 3);
    expect(quiet.asked).toBe(asked);
  });

  it('leaves an unwatched entry alone', async () => {
    const sweep = new QuietSweep({ periodMs: PERIOD_MS, sliceMs: 5 });
    const gone = entry({});
    const kept = entry({});
    sweep.watch(gone);
    sweep.watch(kept);
    sweep.unwatch(gone);
    // The sweep that settles the one it watches has passed the other by.
    await waitUntil('the watched entry to settle', () => kept.settledAt);
    expect(gone.asked).toBe(0);
  });

  it('works in slices: other work runs between entries once a slice has used its time', async () => {
    const sweep = new QuietSweep({ periodMs: PERIOD_MS, sliceMs: 5 });
    const log: string[] = [];
    const first = entry({ workMs: 8, log, name: 'a' });
    // While the first entry settles, something else asks for the event loop: it runs before the
    // next entry, not after the whole sweep.
    sweep.watch({
      settleIfQuiet: (now) => {
        setImmediate(() => log.push('other'));
        return first.settleIfQuiet(now);
      },
    });
    for (const name of ['b', 'c']) sweep.watch(entry({ workMs: 8, log, name }));
    await waitUntil('every entry to settle', () => (log.includes('c') ? true : undefined));
    expect(log).toEqual(['a', 'other', 'b', 'c']);
  });

  it('visits entries watched while a sweep is under way', async () => {
    const sweep = new QuietSweep({ periodMs: PERIOD_MS, sliceMs: 1 });
    // Never quiet: asked once per sweep, it tells which sweep reached the late entry.
    const counter = entry({ quiet: false });
    let sweepOfLate: number | undefined;
    const late: QuietEntry = {
      settleIfQuiet: () => {
        sweepOfLate ??= counter.asked;
        return true;
      },
    };
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
    sweep.watch(counter);
    await waitUntil('the late entry to settle', () => sweepOfLate);
    sweep.unwatch(counter);
    expect(log).toEqual(['first']);
    expect(sweepOfLate).toBe(1);
  });
});
