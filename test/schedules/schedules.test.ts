/* eslint-disable @typescript-eslint/no-unsafe-return -- the pollers hand back JSON answers, read loosely like the rest of these assertions */
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldAnswer, startFakeResponsesProvider } from '../support/fake-responses-provider.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { getJson, postJson, waitUntil } from '../support/wait-until.js';

interface Fire {
  at: string;
  dueAt: string;
  turnId: string | null;
  outcome: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The hour it is (or will be in `aheadMs`) in a zone, as cron reads it. */
function hourIn(timeZone: string, aheadMs: number): number {
  return Number(new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' }).format(new Date(Date.now() + aheadMs)));
}

describe('schedules over HTTP (SQLite)', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  const schedule = async (id: string) => (await getJson(`${runtime.baseUrl}/schedules/${id}`)).body;
  const startedFires = async (id: string): Promise<Fire[]> => ((await schedule(id)).fires as Fire[]).filter((fire) => fire.outcome === 'started');
  /** Turns the store holds for a schedule, read from the SQLite file itself. */
  const turnsOf = (scheduleId: string): number => {
    const database = new BetterSqlite3(path.join(runtime.dataDir, 'turns.sqlite'), { readonly: true });
    try {
      return (database.prepare('select count(*) as count from turns where schedule_id = ?').get(scheduleId) as { count: number }).count;
    } finally {
      database.close();
    }
  };

  it('fires a cron every second on schedule in a non-UTC zone; pauses, resumes, and stops when deleted', async () => {
    // Only the current hour in Asia/Kolkata (UTC+05:30): read as UTC, this hour field would not match now.
    const hour = hourIn('Asia/Kolkata', 4_000);
    const created = await postJson(`${runtime.baseUrl}/schedules`, {
      agent: { id: 'ticker' },
      kind: 'cron',
      cron: `* * ${hour} * * *`,
      timeZone: 'Asia/Kolkata',
      prompt: 'tick',
      model: { script: [{ text: 'tock' }] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'cron', status: 'active', timeZone: 'Asia/Kolkata', overlap: 'skip', missed: 'run_once' });
    expect(created.body.nextFireAt).toMatch(/\.000Z$/);
    const id = created.body.id as string;

    const fires = await waitUntil('three fires', async () => {
      const started = await startedFires(id);
      return started.length >= 3 ? started : undefined;
    });
    for (const fire of fires) {
      expect(fire.dueAt).toMatch(/\.000Z$/);
      // Handled after it was due, and not long after.
      expect(Date.parse(fire.at)).toBeGreaterThanOrEqual(Date.parse(fire.dueAt));
    }
    const dueTimes = fires.map((fire) => Date.parse(fire.dueAt)).sort();
    expect(new Set(dueTimes).size).toBe(dueTimes.length);
    const turn = await waitUntil('a fire turn to end', async () => {
      const record = (await getJson(`${runtime.baseUrl}/turns/${fires[0]?.turnId ?? ''}`)).body;
      return record.status === 'running' ? undefined : record;
    });
    expect(turn).toMatchObject({ scheduleId: id, status: 'completed', output: 'tock', agentId: 'ticker' });

    const paused = await postJson(`${runtime.baseUrl}/schedules/${id}/pause`);
    expect(paused.body).toMatchObject({ status: 'paused', nextFireAt: null });
    // No fire is claimed once paused; one claimed just before may still be starting its turn:
    // waited for, however long a loaded machine takes, and then nothing more may start.
    await waitUntil('the fires claimed before the pause to start', async () => ((await schedule(id)).fires as Fire[]).every((fire) => fire.outcome !== 'starting') ? true : undefined);
    const countWhilePaused = turnsOf(id);
    await pause(2_200);
    expect(turnsOf(id)).toBe(countWhilePaused);

    // The next fire is computed from the moment of resuming, not from before the pause. Timed
    // from when the request was sent: a loaded machine may take a second to answer it.
    const resumedAt = Date.now();
    const resumed = await postJson(`${runtime.baseUrl}/schedules/${id}/resume`);
    expect(resumed.body.status).toBe('active');
    expect(Date.parse(resumed.body.nextFireAt)).toBeGreaterThan(resumedAt - 1_000);
    await waitUntil('a fire after resuming', () => Promise.resolve(turnsOf(id) > countWhilePaused ? true : undefined));

    const listed = (await getJson(`${runtime.baseUrl}/schedules?agentId=ticker`)).body;
    expect(listed.schedules.map((entry: { id: string }) => entry.id)).toEqual([id]);

    const deleted = await fetch(`${runtime.baseUrl}/schedules/${id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    // A fire claimed just before the delete may still start its turn (its record went with the
    // schedule, so it cannot be waited for); overlap "skip" allows one such at a time. None after.
    const countAfterDelete = turnsOf(id);
    await pause(3_000);
    expect(turnsOf(id)).toBeLessThanOrEqual(countAfterDelete + 1);
    const gone = await getJson(`${runtime.baseUrl}/schedules/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('schedule_not_found');
    expect((await postJson(`${runtime.baseUrl}/schedules/${id}/pause`)).status).toBe(404);
  }, 60_000);

  it('skips a fire while the previous fire still runs (overlap skip)', async () => {
    const created = await postJson(`${runtime.baseUrl}/schedules`, {
      agent: { id: 'slowpoke' },
      kind: 'cron',
      cron: '* * * * * *',
      prompt: 'work slowly',
      model: { script: [{ text: 'slow', delayMs: 2_500 }] },
    });
    const id = created.body.id as string;
    const record = await waitUntil('a skipped fire after two started', async () => {
      const current = await schedule(id);
      const fires = current.fires as Fire[];
      return fires.filter((fire) => fire.outcome === 'started').length >= 2 && fires.some((fire) => fire.outcome === 'skipped_overlap') ? current : undefined;
    });
    await fetch(`${runtime.baseUrl}/schedules/${id}`, { method: 'DELETE' });
    const started = (record.fires as Fire[]).filter((fire) => fire.outcome === 'started').sort((a, b) => Date.parse(a.dueAt) - Date.parse(b.dueAt));
    // No two fire turns ran at once: each started after the one before had ended.
    for (let index = 1; index < started.length; index += 1) {
      const previous = (await getJson(`${runtime.baseUrl}/turns/${started[index - 1]?.turnId ?? ''}`)).body;
      const next = (await getJson(`${runtime.baseUrl}/turns/${started[index]?.turnId ?? ''}`)).body;
      expect(previous.finishedAt).not.toBeNull();
      expect(Date.parse(next.createdAt)).toBeGreaterThanOrEqual(Date.parse(previous.finishedAt));
    }
    for (const fire of (record.fires as Fire[]).filter((entry) => entry.outcome === 'skipped_overlap')) expect(fire.turnId).toBeNull();
  }, 30_000);

  it('runs a fire after the previous one ends (overlap enqueue), one waiting at most', async () => {
    const created = await postJson(`${runtime.baseUrl}/schedules`, {
      agent: { id: 'queuer' },
      kind: 'cron',
      cron: '* * * * * *',
      overlap: 'enqueue',
      prompt: 'work slowly',
      model: { script: [{ text: 'slow', delayMs: 1_600 }] },
    });
    const id = created.body.id as string;
    const fires = await waitUntil('three started fires', async () => {
      const started = await startedFires(id);
      return started.length >= 3 ? started : undefined;
    });
    await fetch(`${runtime.baseUrl}/schedules/${id}`, { method: 'DELETE' });
    const turns = await Promise.all(fires.map(async (fire) => (await getJson(`${runtime.baseUrl}/turns/${fire.turnId ?? ''}`)).body));
    turns.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
    let waited = false;
    for (let index = 1; index < turns.length; index += 1) {
      const previous = turns[index - 1];
      // Each queued fire started once the one before had ended, not when it was due.
      expect(previous.finishedAt).not.toBeNull();
      expect(Date.parse(turns[index].createdAt)).toBeGreaterThanOrEqual(Date.parse(previous.finishedAt));
      const fire = fires.find((entry) => entry.turnId === turns[index].id);
      if (fire !== undefined && Date.parse(turns[index].createdAt) - Date.parse(fire.dueAt) > 500) waited = true;
    }
    expect(waited).toBe(true);
  }, 30_000);

  it('answers 400 naming the field for bad cron expressions, zones and times', async () => {
    const base = { agent: { id: 'picky' }, prompt: 'p', model: { script: [] } };
    const cases: [Record<string, unknown>, string[], string][] = [
      [{ kind: 'cron', cron: '61 * * * *' }, ['cron'], 'Invalid value for minute: 61'],
      [{ kind: 'cron', cron: '* * *' }, ['cron'], 'has 3 field(s)'],
      [{ kind: 'cron', cron: '0 0 * * * * 2030' }, ['cron'], 'has 7 field(s)'],
      [{ kind: 'cron', cron: '0 0 31 2 *' }, ['cron'], 'never fires'],
      [{ kind: 'cron', cron: '* * * * *', timeZone: 'Mars/Olympus_Mons' }, ['timeZone'], 'not an IANA time zone'],
      [{ kind: 'cron' }, ['cron'], 'required for kind "cron"'],
      [{ kind: 'once', delaySeconds: 5, at: '2030-01-01T00:00:00Z' }, ['at'], 'exactly one of at and delaySeconds'],
      [{ kind: 'once', at: '2001-01-01T00:00:00Z' }, ['at'], 'is in the past'],
      [{ kind: 'once', at: 'tomorrow' }, ['at'], 'ISO 8601'],
      [{ kind: 'once', delaySeconds: 5, cron: '* * * * *' }, ['cron'], 'only for kind "cron"'],
    ];
    for (const [fields, issuePath, message] of cases) {
      const answer = await postJson(`${runtime.baseUrl}/schedules`, { ...base, ...fields });
      expect(answer.status, JSON.stringify(fields)).toBe(400);
      expect(answer.body.error.code).toBe('invalid_request');
      expect(answer.body.error.issues[0].path).toEqual(issuePath);
      expect(answer.body.error.message).toContain(message);
    }
    expect((await getJson(`${runtime.baseUrl}/schedules?agentId=picky`)).body.schedules).toEqual([]);
    expect((await postJson(`${runtime.baseUrl}/schedules`, { ...base, kind: 'weekly' })).status).toBe(400);
  });

  it('schedules through the tools: a receipt in words, a fire carrying scheduleId, and tool errors naming the field', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        agent: { id: 'planner', tools: { schedule: true } },
        input: 'remind me',
        model: {
          script: [
            {
              calls: [
                { name: 'check_back_later', arguments: { action: 'create', delay_seconds: 1, prompt: 'check the oven', time_zone: 'Asia/Shanghai' } },
                { name: 'cron', arguments: { action: 'create', cron: '0 9 * * *', time_zone: 'Asia/Shanghai', prompt: 'morning summary' } },
                { name: 'cron', arguments: { action: 'create', cron: '0 25 * * *', prompt: 'never' } },
                { name: 'cron', arguments: { action: 'create', cron: '0 9 * * *', time_zone: 'Moon/Base', prompt: 'never' } },
                { name: 'cron', arguments: { action: 'create', cron: '0 9 * * *' } },
                { name: 'check_back_later', arguments: { action: 'create', prompt: 'when?' } },
                { name: 'cron', arguments: { action: 'pause' } },
                { name: 'check_back_later', arguments: { action: 'list', prompt: 'x' } },
              ],
            },
            { text: 'scheduled' },
          ],
        },
      }),
    });
    const turn = await readJson(response);
    expect(turn.status).toBe('completed');
    const ended = turn.events.filter((event: { type: string }) => event.type === 'tool.completed' || event.type === 'tool.failed');
    const byCall = (index: number) => ended.find((event: { callId: string }) => event.callId === `call_1_${index}`);
    const receipts = turn.events.filter((event: { type: string }) => event.type === 'tool.presentation').map((event: { event: { type: string; data: { text: string } } }) => event.event);
    expect(receipts.map((receipt: { type: string }) => receipt.type)).toEqual(['effect.receipt', 'effect.receipt']);
    expect(receipts[0].data.text).toMatch(/^I'll check back at \d\d:\d\d(:\d\d)? Asia\/Shanghai, (today|tomorrow)$/); // seconds are left out when they are :00
    expect(receipts[1].data.text).toMatch(/09:00 Asia\/Shanghai, (today|tomorrow)$/);
    const morning = await schedule(byCall(2).details.scheduleId);
    expect(new Date(morning.nextFireAt).getUTCHours()).toBe(1);
    expect(morning).toMatchObject({ sourceTurnId: turn.id, agentId: 'planner', kind: 'cron' });
    expect(byCall(3).error.message).toContain('cron: "0 25 * * *" is not a valid cron expression');
    expect(byCall(4).error.message).toContain('time_zone: "Moon/Base" is not an IANA time zone');
    expect(byCall(5).error.message).toBe('prompt is required when action is "create"');
    expect(byCall(6).error.message).toBe('give exactly one of delay_seconds and at when action is "create"');
    expect(byCall(7).error.message).toBe('schedule_id is required when action is "pause"');
    expect(byCall(8).error.message).toContain('prompt is not used when action is "list"');

    const onceId = byCall(1).details.scheduleId as string;
    const fired = await waitUntil('the check-back to fire', async () => {
      const record = await schedule(onceId);
      return record.status === 'done' && record.fires[0]?.turnId !== null ? record : undefined;
    });
    expect(fired.nextFireAt).toBeNull();
    expect(fired.fires).toHaveLength(1);
    const fireTurn = await waitUntil('the fire turn to end', async () => {
      const record = (await getJson(`${runtime.baseUrl}/turns/${fired.fires[0].turnId}`)).body;
      return record.status === 'running' ? undefined : record;
    });
    // The fire's turn has the stored tool sources and the stored model (its script restarts).
    expect(fireTurn).toMatchObject({ scheduleId: onceId, agentId: 'planner' });
    const tools = (await getJson(`${runtime.baseUrl}/turns/${fireTurn.id}/tools`)).body.tools.map((tool: { name: string }) => tool.name);
    expect(tools).toEqual(['check_back_later', 'cron']);
    await fetch(`${runtime.baseUrl}/schedules/${morning.id}`, { method: 'DELETE' });
  }, 30_000);
});

describe('a fire the service puts off', () => {
  it('is tried again with backoff while the service is full, then starts: not failed (MAX_CONCURRENT_TURNS=1)', async () => {
    const provider = await startFakeResponsesProvider();
    const runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0', MAX_CONCURRENT_TURNS: '1' } });
    try {
      const held = heldAnswer();
      provider.enqueue({ text: 'the direct turn', headersAfter: held.answered });
      const direct = fetch(`${runtime.baseUrl}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ agent: { id: 'other' }, input: 'hold on', model: { name: 'fake-model' } }),
      });
      await provider.waitForRequest(1);
      const created = await postJson(`${runtime.baseUrl}/schedules`, { agent: { id: 'patient' }, kind: 'once', delaySeconds: 1, prompt: 'wake up', model: { script: [{ text: 'awake' }] } });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const fires = async () => ((await getJson(`${runtime.baseUrl}/schedules/${id}`)).body as { fires: Fire[] }).fires;
      // Put off at least twice (1 s, then 2 s): still starting, not failed.
      await pause(4_000);
      expect((await fires()).map((fire) => fire.outcome)).toEqual(['starting']);
      held.answer();
      expect((await direct).status).toBe(200);
      const started = await waitUntil('the fire to start', async () => {
        const [fire] = await fires();
        return fire?.outcome === 'started' ? fire : undefined;
      });
      const turn = await waitUntil('its turn to end', async () => {
        const record = (await getJson(`${runtime.baseUrl}/turns/${String(started.turnId)}`)).body;
        return record.status === 'running' ? undefined : record;
      });
      expect(turn).toMatchObject({ status: 'completed', output: 'awake', scheduleId: id });
    } finally {
      await runtime.close();
      await provider.close();
    }
  }, 30_000);
});

describe('fires waiting behind earlier ones (overlap enqueue)', () => {
  it('hold no worker: with nine waiting, another schedule still fires on time', async () => {
    const runtime = await startTestRuntime();
    try {
      const create = async (body: Record<string, unknown>) => ((await postJson(`${runtime.baseUrl}/schedules`, { prompt: 'p', ...body })).body as { id: string }).id;
      // Each fire's turn takes 10 s and a fire is due every second: behind each running fire one
      // waits, nine in all, more than there are fire workers (4) and start workers (4) together.
      const slow = await Promise.all(
        Array.from({ length: 9 }, (_, index) => create({ agent: { id: `slow-${index}` }, kind: 'cron', cron: '* * * * * *', overlap: 'enqueue', model: { script: [{ text: 'slow', delayMs: 10_000 }] } })),
      );
      const waiting = async (id: string) => ((await getJson(`${runtime.baseUrl}/schedules/${id}`)).body as { fires: Fire[] }).fires.some((fire) => fire.outcome === 'starting');
      await waitUntil('a fire waiting behind each', async () => ((await Promise.all(slow.map(waiting))).every(Boolean) ? true : undefined));
      // Due in 2 s; handled more than 5 s late it would be recorded skipped_missed.
      const onTime = await create({ agent: { id: 'punctual' }, kind: 'once', delaySeconds: 2, missed: 'skip', model: { script: [{ text: 'on time' }] } });
      const fire = await waitUntil('the punctual fire', async () => {
        const [first] = ((await getJson(`${runtime.baseUrl}/schedules/${onTime}`)).body as { fires: Fire[] }).fires;
        return first !== undefined && first.outcome !== 'starting' ? first : undefined;
      });
      expect(fire.outcome).toBe('started');
      expect(Date.parse(fire.at) - Date.parse(fire.dueAt)).toBeLessThan(5_000);
      for (const id of slow) await fetch(`${runtime.baseUrl}/schedules/${id}`, { method: 'DELETE' });
    } finally {
      await runtime.close();
    }
  }, 60_000);
});
