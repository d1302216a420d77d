import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runStorm, type StormTurn } from '../../bench/storm/storm.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

/**
 * The disconnect storm of `npm run bench:storm`, small: 20 turns running sandboxed commands of
 * seconds (one sleep; children, one of them orphaned; a loop forking every 50 ms; two commands
 * in a row) whose clients leave at random instants. It asserts what must hold whatever the
 * machine's speed — every turn stored `cancelled`, every process of it gone, each call's
 * outcome recorded truthfully — and leaves the times to the bench.
 */
describe('a storm of clients leaving turns whose commands run', () => {
  let runtime: TestRuntime;
  let turns: StormTurn[];
  beforeAll(async () => {
    runtime = await startTestRuntime();
    turns = await runStorm({ baseUrl: runtime.baseUrl, dataDir: runtime.dataDir, turns: 20, wave: 10, seed: 20261206, leaveWithinMs: 1_500, commandSeconds: 3, settleMs: 5_000, scanEveryMs: 10 });
  }, 120_000);
  afterAll(async () => {
    await runtime.close();
  });

  it('ends every turn cancelled, and leaves none of its processes running', () => {
    expect(turns).toHaveLength(20);
    for (const turn of turns) {
      expect(turn.error, turn.label).toBeUndefined();
      expect(turn.leftAt, `${turn.label}: its client left`).toBeDefined();
      expect(turn.status, turn.label).toBe('cancelled');
      expect(turn.storedMs, `${turn.label}: its end was stored`).toBeDefined();
      expect(turn.processesGoneMs, `${turn.label}: its processes are gone`).toBeDefined();
      expect(turn.ranOn, turn.label).toBe(false);
    }
  });

  it('records each stopped call as not_started or cancelled: the command acknowledged, never maybe_ran', () => {
    for (const turn of turns) {
      // A client that left before the model's answer leaves no call at all.
      const calls = turn.shape === 'two commands' ? 2 : 1;
      expect([0, calls], turn.label).toContain(turn.outcomes.length);
      for (const outcome of turn.outcomes) expect(['not_started', 'cancelled'], `${turn.label}: ${outcome}`).toContain(outcome);
      // The second command of a turn waits for the first: a cancel during the first means it never began.
      if (turn.outcomes.length === 2) expect(turn.outcomes[1], turn.label).toBe('not_started');
    }
    // Most clients leave while their command runs; some leave within its first 40 ms.
    expect(turns.flatMap((turn) => turn.outcomes).filter((outcome) => outcome === 'cancelled').length).toBeGreaterThan(5);
  });
});
