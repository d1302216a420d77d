import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStream } from '../support/sse-client.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';
import { readJson } from '../support/test-runtime.js';
import { decide, eventsOf, expectContiguousSeqs, startStreamingTurn, storedEvents, waitForEnd, waitForPending } from './approval-test-kit.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

/** A turn that writes a file after approval, reads it back in the next step, then answers. */
function parkingTurn(agentId: string) {
  return {
    agent: { id: agentId, tools: { computer: true }, approvals: { destructive: 'ask' } },
    input: 'write then read',
    model: {
      script: [
        { text: 'Step one.', calls: [{ name: 'write_file', arguments: { path: 'kept.txt', content: 'survived' } }] },
        { text: 'Step two.', calls: [{ name: 'read_file', arguments: { path: 'kept.txt' } }] },
        { text: 'all done' },
      ],
    },
  };
}

/** Parks a turn on `service` and kills the process (kill -9) while it waits. */
async function parkThenKill(service: ServiceProcess, agentId: string): Promise<{ turnId: string; pending: any; seenSeqs: number }> {
  const { stream, turnId } = await startStreamingTurn(service.baseUrl, parkingTurn(agentId));
  await stream.waitFor((message) => message.event === 'tool.approval_requested');
  const record = await waitForPending(service.baseUrl, turnId);
  const seenSeqs = stream.messages.length;
  await service.crash();
  stream.destroy();
  return { turnId, pending: record.pendingApprovals[0], seenSeqs };
}

/** After the restart: still waiting, then approved, the turn goes on from the store to its end, numbering on. */
async function approveAndFollow(options: { via: string; turnId: string; pending: any; seenSeqs: number; dataDir: string | undefined; agentId: string }) {
  const { via, turnId, pending } = options;
  const waiting = await waitForPending(via, turnId);
  expect(waiting.pendingApprovals[0]).toEqual(pending);
  const tail = await openStream({ url: `${via}/turns/${turnId}/events`, method: 'GET', headers: { 'last-event-id': String(options.seenSeqs) } });
  const decided = await decide(via, turnId, pending.callId, { decision: 'approve', argumentsHash: pending.argumentsHash });
  expect(decided.status).toBe(202);
  await tail.ended;
  const tailed = eventsOf(tail);
  expect(tailed[0]).toMatchObject({ type: 'tool.approval_decided', seq: options.seenSeqs + 1 });
  expect(tailed.map((event) => event['type'])).toEqual([
    'tool.approval_decided',
    'tool.started',
    'tool.completed',
    'message.delta',
    'message.completed',
    'tool.started',
    'tool.completed',
    'message.delta',
    'message.completed',
    'turn.completed',
  ]);
  // The scripted model went on at its second step, and read what the approved call wrote.
  expect(tailed.find((event) => event['type'] === 'message.completed')).toMatchObject({ text: 'Step two.' });
  expect(tailed.filter((event) => event['type'] === 'tool.completed')[1]?.['output']).toContain('survived');
  const all = await storedEvents(via, turnId);
  expectContiguousSeqs(all);
  expect(all.slice(options.seenSeqs)).toEqual(tailed);
  expect(await waitForEnd(via, turnId)).toMatchObject({ status: 'completed', output: 'all done', iterations: 3 });
  if (options.dataDir !== undefined) {
    expect(await readFile(path.join(options.dataDir, 'agents', options.agentId, 'home', 'kept.txt'), 'utf8')).toBe('survived');
  }
}

describe('a parked turn survives kill -9 of its process', () => {
  const folders: string[] = [];
  const services: ServiceProcess[] = [];
  let schema: PostgresSchema | undefined;
  afterAll(async () => {
    await Promise.all(services.map((service) => service.crash()));
    await schema?.drop();
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  });
  const start = async (env: Record<string, string>) => {
    const service = await startServiceProcess({ instanceId: env['INSTANCE_ID'] ?? 'approvals', env });
    services.push(service);
    return service;
  };

  it('on SQLite: the restarted process still shows it waiting, and a decision resumes it from the store', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-parked-'));
    folders.push(dataDir);
    const env = { DATA_DIR: dataDir, INSTANCE_ID: 'parked-sqlite' };
    const parked = await parkThenKill(await start(env), 'sqlite-agent');
    const restarted = await start(env);
    await approveAndFollow({ via: restarted.baseUrl, ...parked, dataDir, agentId: 'sqlite-agent' });
  }, 90_000);

  it('on PostgreSQL: after kill -9, the same instance and another replica each resume a parked turn', async () => {
    schema = await createPostgresSchema();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-parked-pg-'));
    folders.push(dataDir);
    const pg = schema;
    const startIn = (instance: string) => pg.whileSchemasAreStable(() => start({ DATABASE_URL: pg.url, DATA_DIR: dataDir, INSTANCE_ID: instance }));

    // The same instance, restarted.
    const first = await parkThenKill(await startIn('replica-a'), 'pg-agent-1');
    const restarted = await startIn('replica-a');
    await approveAndFollow({ via: restarted.baseUrl, ...first, dataDir, agentId: 'pg-agent-1' });

    // Another replica takes the decision for a turn whose process died.
    const other = await startIn('replica-b');
    const second = await parkThenKill(restarted, 'pg-agent-2');
    await approveAndFollow({ via: other.baseUrl, ...second, dataDir, agentId: 'pg-agent-2' });
  }, 120_000);

  it('on PostgreSQL: a decision through one replica resumes a turn parked on another that is alive', async () => {
    schema ??= await createPostgresSchema();
    const pg = schema;
    const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-runtime-parked-pg2-'));
    folders.push(dataDir);
    const startIn = (instance: string) => pg.whileSchemasAreStable(() => start({ DATABASE_URL: pg.url, DATA_DIR: dataDir, INSTANCE_ID: instance }));
    const [a, b] = await Promise.all([startIn('live-a'), startIn('live-b')]);
    const { stream, turnId } = await startStreamingTurn(a.baseUrl, parkingTurn('pg-live'));
    const record = await waitForPending(b.baseUrl, turnId);
    const [pending] = record.pendingApprovals;
    // Both replicas race to decide the same call: exactly one decision counts.
    const answers = await Promise.all([
      decide(a.baseUrl, turnId, pending.callId, { decision: 'approve', argumentsHash: pending.argumentsHash }),
      decide(b.baseUrl, turnId, pending.callId, { decision: 'approve', argumentsHash: pending.argumentsHash }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409]);
    // The original stream on replica A follows the turn to its end, wherever it runs.
    await stream.ended;
    const events = eventsOf(stream);
    expectContiguousSeqs(events);
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed', output: 'all done' });
    expect(events.filter((event) => event['type'] === 'tool.approval_decided')).toHaveLength(1);
    expect(await readJson(await fetch(`${b.baseUrl}/turns/${turnId}`))).toMatchObject({ status: 'completed' });
  }, 90_000);
});
