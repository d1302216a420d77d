import { afterAll, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../src/durable/crash-points.js';
import { crashAt, crashRig, diedAt } from '../support/crash-test.js';
import { getJson, postJson, waitUntil } from '../support/wait-until.js';

interface Fire {
  readonly dueAt: string;
  readonly turnId: string | null;
  readonly outcome: string;
}

const rig = crashRig();

const CASES: [CrashPoint, 'once' | 'cron'][] = [
  ['schedule.fire-claimed', 'once'],
  ['schedule.fire-turn-started', 'once'],
  ['schedule.fire-claimed', 'cron'],
];

/**
 * The service dies by kill -9 at each named point of a schedule fire (TEST_CRASH_AT, armed in
 * the first process only); a new process under another INSTANCE_ID on the same store starts
 * that fire's turn once, records it started, and (cron) goes on firing, one turn per due time.
 */
describe.each(rig.stores)('a schedule on %s and kill -9 at a named point of a fire', (_store, storeEnv) => {
  afterAll(() => rig.close());

  it.concurrent.each(CASES)('starts the fire once after a crash at %s (%s)', async (point, kind) => {
    const agentId = `crash-${kind}-${point.replaceAll('.', '-')}`;
    const env = await storeEnv();
    const first = await rig.service({ instanceId: 'sched-crash-a', env: { ...env, ...crashAt(point) } });
    const timing = kind === 'once' ? { kind: 'once', delaySeconds: 1 } : { kind: 'cron', cron: '*/2 * * * * *' };
    const created = await postJson(`${first.baseUrl}/schedules`, { agent: { id: agentId }, prompt: 'wake up', model: { script: [{ delayMs: 200, text: 'awake' }] }, ...timing });
    expect(created.status).toBe(201);
    const scheduleId = created.body.id as string;
    await diedAt(first, point);

    const second = await rig.service({ instanceId: 'sched-crash-b', dataDir: first.dataDir, env });
    const enough = kind === 'once' ? 1 : 3;
    const fires = await waitUntil(
      'the fires to start',
      async () => {
        const record = (await getJson(`${second.baseUrl}/schedules/${scheduleId}`)).body as { fires: Fire[] };
        const started = record.fires.filter((fire) => fire.outcome === 'started');
        return started.length >= enough && record.fires.every((fire) => fire.outcome !== 'starting' || kind === 'cron') ? record.fires : undefined;
      },
      60_000,
    );
    // The fire the crash cut into was started, once: no fire failed, none stayed starting for good.
    const crashed = [...fires].sort((a, b) => a.dueAt.localeCompare(b.dueAt))[0];
    expect(crashed?.outcome).toBe('started');
    expect(fires.filter((fire) => fire.outcome === 'failed')).toEqual([]);
    // No more fires; then every turn of the agent is one fire's own, and no fire has two.
    expect((await postJson(`${second.baseUrl}/schedules/${scheduleId}/pause`)).status).toBe(200);
    const { turns, final } = await waitUntil('the fire turns to end', async () => {
      const listed = (await getJson(`${second.baseUrl}/turns?agentId=${agentId}`)).body.turns as { id: string; status: string }[];
      const record = (await getJson(`${second.baseUrl}/schedules/${scheduleId}`)).body as { fires: Fire[] };
      const settled = listed.every((turn) => turn.status !== 'running' && turn.status !== 'queued') && record.fires.every((fire) => fire.outcome !== 'starting');
      return settled ? { turns: listed, final: record.fires } : undefined;
    });
    const fireTurns = final.filter((fire) => fire.outcome === 'started').map((fire) => fire.turnId);
    expect(new Set(fireTurns).size).toBe(fireTurns.length);
    expect(turns.map((turn) => turn.id).sort()).toEqual([...fireTurns].sort());
    await second.stop();
  }, 120_000);
});
