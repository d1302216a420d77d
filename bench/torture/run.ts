/**
 * The crash-anywhere torture (`npm run torture`): for each round, new work is submitted and a
 * service process is killed with SIGKILL at a seeded instant and restarted; after the last round
 * and a settle time it checks that everything ended once, with one webhook each, and nothing is
 * left behind. Prints its figures; exits 1 when an invariant broke. See docs/faults.md.
 *
 *   npm run torture -- [--store sqlite|postgres|both] [--rounds 50] [--seed N] [--round N] [--keep]
 *                      [--max-kill-delay-ms 3000] [--settle-seconds 180]
 */
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { StoreKind } from './deployment.js';
import { formatReport } from './report.js';
import { runTorture } from './torture.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    rounds: { type: 'string', default: '50' },
    seed: { type: 'string' },
    round: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'max-kill-delay-ms': { type: 'string', default: '3000' },
    'settle-seconds': { type: 'string', default: '180' },
  },
});

const wholeNumber = (name: string, value: string | undefined): number => {
  const number = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || !Number.isSafeInteger(number)) {
    console.error(`--${name} must be a whole number, not ${String(value)}`);
    process.exit(64);
  }
  return number;
};
const stores: StoreKind[] = values.store === 'both' ? ['sqlite', 'postgres'] : values.store === 'sqlite' || values.store === 'postgres' ? [values.store] : [];
if (stores.length === 0) {
  console.error(`--store must be sqlite, postgres or both, not ${values.store}`);
  process.exit(64);
}
const seed = values.seed === undefined ? randomInt(2 ** 31) : wholeNumber('seed', values.seed);
const rounds = wholeNumber('rounds', values.rounds);
const onlyRound = values.round === undefined ? undefined : wholeNumber('round', values.round);

// Ctrl-C ends the current round, then stops the processes and cleans up as usual.
const controller = new AbortController();
process.once('SIGINT', () => {
  console.log('interrupted: finishing the round, then cleaning up');
  controller.abort();
});

let failed = false;
for (const store of stores) {
  const result = await runTorture({
    store,
    seed,
    rounds,
    ...(onlyRound === undefined ? {} : { onlyRound }),
    maxKillDelayMs: wholeNumber('max-kill-delay-ms', values['max-kill-delay-ms']),
    settleTimeoutMs: wholeNumber('settle-seconds', values['settle-seconds']) * 1000,
    keepOnViolation: values.keep,
    log: (line) => {
      console.log(line);
    },
    signal: controller.signal,
  });
  for (const line of formatReport(result)) console.log(line);
  if (result.violations.length > 0) failed = true;
}
process.exit(failed ? 1 : 0);
