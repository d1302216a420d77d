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
      (await postJson(`${first.baseUrl}/schedules`, { agent: { id: 'sleeper' }, prompt: 'wake up', model: { script: [{ text: 'awake' }] }, ...body })).body.id as string;
    const cronRunOnce = await create({ kind: 'cron', cron: '* * * * * *', timeZone: 'Europe/Berlin' });
    const cronSkip = await create({ kind: 'cron', cron: '* * * * * *', missed: 'skip' });
    const onceRunOnce = await create({ kind: 'once', delaySeconds: 2 });
    const onceSkip = await create({ kind: 'once', delaySeconds: 2, missed: 'skip' });
    await waitUntil('a fire before the downtime', async () => {
      const record = (await getJson(`${first.baseUrl}/schedules/${cronRunOnce}`)).body;
      return record.fires.length > 0 ? true : undefined;
    });
    await first.close({ keepData: true });
    const downAt = Date.now();
    await pause(8_000);

    const second = await startTestRuntime({ dataDir });
    const upAt = Date.now();
    try {
      const read = async (id: string) => (await getJson(`${second.baseUrl}/schedules/${id}`)).body;
      await waitUntil('both once schedules handled', async () => ((await read(onceRunOnce)).status === 'done' && (await read(onceSkip)).status === 'done' ? true : undefined));
      await pause(2_500);
      const during = (fires: Fire[]) => fires.filter((fire) => Date.parse(fire.dueAt) > downAt && Date.parse(fire.dueAt) < upAt - 1_000);

      // run_once: the one fire due while down (the others were never due: the next one is
      // computed from when it was handled) runs late, then the schedule goes on normally.
      const runOnce = (await read(cronRunOnce)).fires as Fire[];
      const late = during(runOnce);
      expect(late).toHaveLength(1);
      expect(late[0]?.outcome).toBe('started');
      expect(Date.parse(late[0]?.at ?? '') - Date.parse(late[0]?.dueAt ?? '')).toBeGreaterThan(5_000);
      expect(runOnce.filter((fire) => Date.parse(fire.dueAt) > upAt + 500 && fire.outcome === 'started').length).toBeGreaterThan(0);

      const skip = (await read(cronSkip)).fires as Fire[];
      expect(during(skip).map((fire) => [fire.outcome, fire.turnId])).toEqual([['skipped_missed', null]]);
      expect(skip.filter((fire) => Date.parse(fire.dueAt) > upAt + 500 && fire.outcome === 'started').length).toBeGreaterThan(0);

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
