/* eslint-disable @typescript-eslint/no-unsafe-return -- the pollers hand back JSON answers, read loosely like the rest of these assertions */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestRuntime } from '../support/test-runtime.js';
import { getJson, postJson, waitUntil } from '../support/wait-until.js';

interface Fire {
  at: string;
  dueAt: string;
  turnId: string | null;
  outcome: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('fires due while the service was down', () => {
  const folders: string[] = [];
  afterAll(async () => {
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('follow the missed policy after a restart: run_once fires once for all of them, skip fires none', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-schedule-downtime-'));
    folders.push(dataDir);
    const first = await startTestRuntime({ dataDir });
    const create = async (body: Record<string, unknown>) =>
      (await postJson(`${first.baseUrl}/schedules`, { agent: { id: 'sleeper' }, prompt: 'wake up', model: { script: [{ text: 'awake' }] }, ...body })).body as { id: string; nextFireAt: string };
    const cronRunOnce = (await create({ kind: 'cron', cron: '* * * * * *', timeZone: 'Europe/Berlin' })).id;
    const cronSkip = (await create({ kind: 'cron', cron: '* * * * * *', missed: 'skip' })).id;
    await waitUntil('a fire before the downtime', async () => {
      const record = (await getJson(`${first.baseUrl}/schedules/${cronRunOnce}`)).body;
      return record.fires.length > 0 ? true : undefined;
    });
    // Made just before the service stops, due 5 s later: while it is down, however slowly a
    // loaded machine stops it.
    const once = await create({ kind: 'once', delaySeconds: 5 });
    const onceRunOnce = once.id;
    const onceSkip = (await create({ kind: 'once', delaySeconds: 5, missed: 'skip' })).id;
    await first.close({ keepData: true });
    const downAt = Date.now();
    // Down long enough that every fire due meanwhile is handled more than MISSED_AFTER_MS (5 s) late.
    await pause(Math.max(downAt + 8_000, Date.parse(once.nextFireAt) + 7_000) - Date.now());

    const restartAt = Date.now();
    const second = await startTestRuntime({ dataDir });
    const upAt = Date.now();
    try {
      const read = async (id: string) => (await getJson(`${second.baseUrl}/schedules/${id}`)).body;
      await waitUntil('both once schedules handled', async () => ((await read(onceRunOnce)).status === 'done' && (await read(onceSkip)).status === 'done' ? true : undefined));
      const goesOn = (fires: Fire[]) => fires.filter((fire) => Date.parse(fire.dueAt) > upAt + 500 && fire.outcome === 'started');
      await waitUntil('both crons to fire normally after the restart', async () =>
        goesOn((await read(cronRunOnce)).fires as Fire[]).length > 0 && goesOn((await read(cronSkip)).fires as Fire[]).length > 0 ? true : undefined,
      );
      // The fires due while it was down: due before the restart, handled after the stop. Told apart
      // by what happened, not by how long a loaded machine took to stop and start the service.
      const during = (fires: Fire[]) => fires.filter((fire) => Date.parse(fire.dueAt) < restartAt && Date.parse(fire.at) >= downAt);

      // run_once: the one fire due while down (the others were never due: the next one is
      // computed from when it was handled) runs late, then the schedule goes on normally.
      const runOnce = (await read(cronRunOnce)).fires as Fire[];
      const late = during(runOnce);
      expect(late).toHaveLength(1);
      expect(late[0]?.outcome).toBe('started');
      expect(Date.parse(late[0]?.at ?? '') - Date.parse(late[0]?.dueAt ?? '')).toBeGreaterThan(5_000);
      expect(goesOn(runOnce).length).toBeGreaterThan(0);

      const skip = (await read(cronSkip)).fires as Fire[];
      expect(during(skip).map((fire) => [fire.outcome, fire.turnId])).toEqual([['skipped_missed', null]]);
      expect(goesOn(skip).length).toBeGreaterThan(0);

      const onceLate = await read(onceRunOnce);
      expect(onceLate.fires.map((fire: Fire) => fire.outcome)).toEqual(['started']);
      expect((await getJson(`${second.baseUrl}/turns/${onceLate.fires[0].turnId}`)).body.scheduleId).toBe(onceRunOnce);
      const onceSkipped = await read(onceSkip);
      expect(onceSkipped.fires.map((fire: Fire) => [fire.outcome, fire.turnId])).toEqual([['skipped_missed', null]]);
      expect(onceSkipped.nextFireAt).toBeNull();
    } finally {
      await fetch(`${second.baseUrl}/schedules/${cronRunOnce}`, { method: 'DELETE' });
      await fetch(`${second.baseUrl}/schedules/${cronSkip}`, { method: 'DELETE' });
      await second.close({ keepData: true });
    }
  }, 90_000);
});
