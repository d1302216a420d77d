import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { eventsOf, openStream, type OpenStream } from '../support/sse-client.js';
import { readJson } from '../support/test-runtime.js';

/**
 * Three real service processes on one PostgreSQL schema, as behind a load balancer: a turn
 * runs on one, and the others cancel it, tail it, queue behind it, replay it and, when its
 * process is killed, end it.
 */
describe('replicas as separate processes on PostgreSQL', () => {
  let schema: PostgresSchema;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let c: ServiceProcess;
  const started: ServiceProcess[] = [];
  const env = (): Record<string, string> => ({ DATABASE_URL: schema.url, AGENT_QUEUE_LIMIT: '2', SSE_PING_MS: '200' });

  beforeAll(async () => {
    schema = await createPostgresSchema();
    // The first migrates the schema; the others then start side by side.
    const startReplica = async (instanceId: string) => {
      const replica = await startServiceProcess({ instanceId, env: env() });
      started.push(replica);
      return replica;
    };
    a = await schema.whileSchemasAreStable(() => startReplica('replica-a'));
    [b, c] = await schema.whileSchemasAreStable(() => Promise.all([startReplica('replica-b'), startReplica('replica-c')]));
  }, 180_000);
  afterAll(async () => {
    await Promise.all(started.map((replica) => replica.stop()));
    await schema.drop();
  }, 60_000);

  const longTurn = (agentId: string, extra: Record<string, unknown> = {}) => ({
    agent: { id: agentId },
    input: 'wait a while',
    model: { script: [{ text: 'thinking', delayMs: 60_000 }] },
    ...extra,
  });
  const shortTurn = (agentId: string, extra: Record<string, unknown> = {}) => ({
    agent: { id: agentId },
    input: 'quick',
    model: { script: [{ text: 'done', delayMs: 400 }] },
    ...extra,
  });
  const start = async (replica: ServiceProcess, body: unknown, headers: Record<string, string> = {}): Promise<{ stream: OpenStream; turnId: string }> => {
    const stream = await openStream({ url: `${replica.baseUrl}/turns`, body, headers });
    return { stream, turnId: String(stream.response.headers['turn-id']) };
  };
  const types = (stream: OpenStream) => stream.messages.map((message) => message.event);
  const record = async (replica: ServiceProcess, turnId: string): Promise<any> => readJson(await fetch(`${replica.baseUrl}/turns/${turnId}`));

  it('cancels a turn through a replica that does not run it: 202, and the owner ends it', async () => {
    const { stream, turnId } = await start(a, longTurn('cancel-agent'));
    await stream.waitFor((message) => message.event === 'turn.started');

    const cancel = await fetch(`${b.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    expect(await readJson(cancel)).toMatchObject({ id: turnId, status: 'cancelled', error: { reason: 'cancel_requested' } });
    await stream.ended;
    expect(eventsOf(stream).at(-1)).toMatchObject({ type: 'turn.cancelled', reason: 'cancel_requested' });

    const again = await fetch(`${c.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect((await readJson(again)).error.code).toBe('turn_not_running');
  }, 60_000);

  it('tails a running turn live through another replica, event for event', async () => {
    const { stream, turnId } = await start(a, {
      agent: { id: 'tail-agent' },
      input: 'several steps',
      model: { script: [{ text: 'one', calls: [{ name: 'nothing', arguments: {} }], delayMs: 300 }, { text: 'two', delayMs: 300 }] },
    });
    await stream.waitFor((message) => message.event === 'turn.started');
    const tails = await Promise.all([b, c].map((replica) => openStream({ url: `${replica.baseUrl}/turns/${turnId}/events`, method: 'GET' })));
    await Promise.all([stream.ended, ...tails.map((tail) => tail.ended)]);
    for (const tail of tails) expect(eventsOf(tail)).toEqual(eventsOf(stream));
    expect(eventsOf(stream).at(-1)).toMatchObject({ type: 'turn.completed', output: 'two' });
    expect(eventsOf(stream).length).toBeGreaterThan(5);
  }, 60_000);

  it('queues a turn behind the agent’s running turn on another replica, then runs it after', async () => {
    // The first turn runs until cancelled below: the second is queued however slowly it arrives.
    const first = await start(a, longTurn('queue-agent'));
    await first.stream.waitFor((message) => message.event === 'turn.started');
    const second = await start(b, shortTurn('queue-agent'));
    const queued = await second.stream.waitFor((message) => message.event === 'turn.queued');
    expect(JSON.parse(queued.data)).toMatchObject({ seq: 1, position: 1 });
    expect(await record(c, second.turnId)).toMatchObject({ status: 'queued', queuedAt: expect.any(String) });
    expect((await fetch(`${c.baseUrl}/turns/${first.turnId}/cancel`, { method: 'POST' })).status).toBe(202);

    await Promise.all([first.stream.ended, second.stream.ended]);
    expect(types(second.stream)).toEqual(['turn.queued', 'turn.started', 'message.delta', 'message.completed', 'turn.completed']);
    const firstEnd = String(eventsOf(first.stream).at(-1)?.['at']);
    const secondStart = String(eventsOf(second.stream)[1]?.['at']);
    expect(secondStart >= firstEnd).toBe(true);
    expect(await record(a, second.turnId)).toMatchObject({ status: 'completed', queuedAt: expect.any(String) });
    expect((await record(a, first.turnId)).queuedAt).toBeUndefined();
  }, 60_000);

  it('refuses with 409 agent_busy: multitask reject while running, and enqueue beyond AGENT_QUEUE_LIMIT', async () => {
    const running = await start(a, longTurn('busy-agent'));
    await running.stream.waitFor((message) => message.event === 'turn.started');
    const reject = await fetch(`${b.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(shortTurn('busy-agent', { multitask: 'reject' })) });
    expect(reject.status).toBe(409);
    expect((await readJson(reject)).error.code).toBe('agent_busy');

    const queued = [await start(b, longTurn('busy-agent')), await start(c, longTurn('busy-agent'))];
    for (const [index, entry] of queued.entries()) {
      expect(JSON.parse((await entry.stream.waitFor((message) => message.event === 'turn.queued')).data).position).toBe(index + 1);
    }
    const full = await fetch(`${a.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(shortTurn('busy-agent')) });
    expect(full.status).toBe(409);
    expect((await readJson(full)).error).toMatchObject({ code: 'agent_busy', message: expect.stringContaining('AGENT_QUEUE_LIMIT') });

    // A queued turn cancelled through a third replica ends without ever starting; it holds open pings meanwhile.
    while (queued[1]?.stream.comments.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(queued[1]?.stream.comments[0]).toBe(': ping');
    const cancel = await fetch(`${a.baseUrl}/turns/${queued[0]?.turnId}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    await queued[0]?.stream.ended;
    expect(types(queued[0]!.stream)).toEqual(['turn.queued', 'turn.cancelled']);
    expect(await record(b, queued[0]!.turnId)).toMatchObject({ status: 'cancelled', queuedAt: expect.any(String) });

    // The queued one first: cancelling the running turn first would let it start.
    for (const entry of [queued[1]!, running]) {
      expect((await fetch(`${b.baseUrl}/turns/${entry.turnId}/cancel`, { method: 'POST' })).status).toBe(202);
    }
    await Promise.all([running.stream.ended, queued[1]!.stream.ended]);
    expect(types(queued[1]!.stream)).not.toContain('turn.started');
  }, 90_000);

  it('interrupts the running turn on another replica with reason superseded, then runs the new one', async () => {
    const running = await start(a, longTurn('interrupt-agent'));
    await running.stream.waitFor((message) => message.event === 'turn.started');
    const next = await start(b, shortTurn('interrupt-agent', { multitask: 'interrupt' }));
    await Promise.all([running.stream.ended, next.stream.ended]);
    expect(eventsOf(running.stream).at(-1)).toMatchObject({ type: 'turn.cancelled', reason: 'superseded' });
    expect(types(next.stream)).toEqual(['turn.queued', 'turn.started', 'message.delta', 'message.completed', 'turn.completed']);
    expect(await record(c, running.turnId)).toMatchObject({ status: 'cancelled', error: { reason: 'superseded' } });
  }, 60_000);

  it('runs both at once with multitask concurrent', async () => {
    const running = await start(a, longTurn('concurrent-agent'));
    await running.stream.waitFor((message) => message.event === 'turn.started');
    const beside = await start(b, shortTurn('concurrent-agent', { multitask: 'concurrent' }));
    await beside.stream.ended;
    expect(types(beside.stream)[0]).toBe('turn.started');
    expect(eventsOf(beside.stream).at(-1)).toMatchObject({ type: 'turn.completed' });
    expect((await record(c, running.turnId)).status).toBe('running');
    expect((await fetch(`${c.baseUrl}/turns/${running.turnId}/cancel`, { method: 'POST' })).status).toBe(202);
    await running.stream.ended;
  }, 60_000);

  it('makes one turn of 20 concurrent identical idempotent requests spread over the replicas, and runs its command once', async () => {
    const body = {
      agent: { id: 'idem-agent', tools: { computer: true } },
      input: 'count once',
      model: { script: [{ calls: [{ name: 'run_command', arguments: { command: 'echo hit >> hits.txt' } }], delayMs: 200 }, { text: 'counted' }] },
    };
    const replicas = [a, b, c];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_unused, index) =>
        fetch(`${replicas[index % 3]?.baseUrl}/turns`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': 'retry-me-20' },
          body: JSON.stringify(body),
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
    const turnIds = new Set(answers.map((answer) => answer.headers.get('turn-id')));
    expect(turnIds.size).toBe(1);
    const replayed = answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true');
    expect(replayed).toHaveLength(19);
    const records = await Promise.all(answers.map((answer) => readJson(answer)));
    for (const entry of records) expect(entry).toMatchObject({ status: 'completed', output: 'counted' });
    expect(records[0].events.find((event: { type: string }) => event.type === 'tool.completed')).toMatchObject({ name: 'run_command' });

    const hits = await Promise.all(
      replicas.map((replica) =>
        readFile(path.join(replica.dataDir, 'agents', 'idem-agent', 'home', 'hits.txt'), 'utf8').catch(() => ''),
      ),
    );
    expect(hits.join('')).toBe('hit\n');

    const reused = await fetch(`${b.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'retry-me-20' },
      body: JSON.stringify({ ...body, input: 'something else' }),
    });
    expect(reused.status).toBe(422);
    expect((await readJson(reused)).error.code).toBe('idempotency_key_reused');
  }, 90_000);

  it('stops a turn here when another replica has already ended it (its heartbeats were presumed lost)', async () => {
    const { stream, turnId } = await start(a, longTurn('presumed-dead'));
    await stream.waitFor((message) => message.event === 'turn.started');
    // What another replica's sweep does to a turn whose heartbeat went stale.
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      await client.query(
        `insert into turn_events (turn_id, seq, type, body)
         select $1, coalesce(max(seq), 0) + 1, 'turn.failed', '{"type":"turn.failed"}' from turn_events where turn_id = $1`,
        [turnId],
      );
      await client.query(`update turns set status = 'interrupted', finished_at = now()::text where id = $1`, [turnId]);
    } finally {
      await client.end();
    }
    await stream.ended;
    // Stream = store: the client is sent the terminal event the store holds (the sweep's), and the turn stopped here.
    expect(eventsOf(stream).at(-1)).toMatchObject({ type: 'turn.failed' });
    expect((await record(b, turnId)).status).toBe('interrupted');
  }, 60_000);

  it('ends a killed replica’s turns interrupted from another replica, and hands its agent to the next queued turn', async () => {
    const doomed = await start(c, longTurn('orphan-agent'));
    await doomed.stream.waitFor((message) => message.event === 'turn.started');
    const waiting = await start(b, shortTurn('orphan-agent'));
    await waiting.stream.waitFor((message) => message.event === 'turn.queued');

    const killedAt = performance.now();
    await c.crash();
    doomed.stream.destroy();
    // The contract's bound is 20 s; this checks that it happens, with room for a loaded machine's
    // late timers, not how fast.
    let interrupted: Record<string, unknown> | undefined;
    while (performance.now() - killedAt < 60_000) {
      const current = await record(a, doomed.turnId);
      if (current.status !== 'running') {
        interrupted = current;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(interrupted).toMatchObject({ status: 'interrupted', error: { code: 'interrupted' } });
    const events = await readJson(await fetch(`${a.baseUrl}/turns/${doomed.turnId}/events`, { headers: { accept: 'application/json' } }));
    expect(events.events.map((event: { type: string }) => event.type)).toEqual(['turn.started', 'turn.failed']);

    await waiting.stream.ended;
    expect(types(waiting.stream).slice(0, 2)).toEqual(['turn.queued', 'turn.started']);
    expect(eventsOf(waiting.stream).at(-1)).toMatchObject({ type: 'turn.completed', output: 'done' });
  }, 120_000);
});
