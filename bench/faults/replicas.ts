/**
 * Fault scenario: replicas behind a load balancer (PostgreSQL, three service processes).
 * Prints cross-replica cancel latency (cancel sent through a replica that does not run the
 * turn → `turn.cancelled` on the owner's stream), orphan detection time (kill -9 of a replica
 * → its turns read `interrupted` through another), live tail lag through a non-owner, and how
 * many turns 20 concurrent identical idempotent requests made.
 *
 *   npm run faults -- replicas        (or: npx tsx bench/faults/replicas.ts)
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { percentile } from '../bench-support.js';
import { createPostgresSchema } from '../../test/support/postgres-schema.js';
import { startServiceProcess, type ServiceProcess } from '../../test/support/service-process.js';
import { openStream } from '../../test/support/sse-client.js';

const CANCEL_SAMPLES = 40;
const ORPHAN_ROUNDS = 3;
const ORPHAN_TURNS = 10;
const TAIL_TURNS = 5;

const root = path.resolve(import.meta.dirname, '../..');
// `npm run faults` builds first; run the built server then, as production does.
const entry = existsSync(path.join(root, 'dist/src/server.js')) ? 'dist/src/server.js' : 'src/server.ts';
const schema = await createPostgresSchema();
const env = { DATABASE_URL: schema.url };
const replicas: ServiceProcess[] = [];
const start = async (instanceId: string): Promise<ServiceProcess> => {
  const replica = await schema.whileSchemasAreStable(() => startServiceProcess({ instanceId, env, entry }));
  replicas.push(replica);
  return replica;
};
const longTurn = (agentId: string) => ({ agent: { id: agentId }, input: 'wait', model: { script: [{ text: 'never', delayMs: 60_000 }] } });
const ms = (value: number) => `${value.toFixed(1)} ms`;

try {
  const owner = await start('bench-a');
  const other = await start('bench-b');

  // Cross-replica cancel: each agent distinct, so no turn waits for another.
  const cancelLatencies: number[] = [];
  const answerLatencies: number[] = [];
  for (let index = 0; index < CANCEL_SAMPLES; index += 1) {
    const stream = await openStream({ url: `${owner.baseUrl}/turns`, body: longTurn(`cancel-${index}`) });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'turn.started');
    const sentAt = performance.now();
    const answer = fetch(`${other.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' }).then(async (response) => {
      answerLatencies.push(performance.now() - sentAt);
      if (response.status !== 202) throw new Error(`cancel answered ${response.status}`);
      await response.arrayBuffer();
    });
    await stream.waitFor((message) => message.event === 'turn.cancelled', 10_000);
    cancelLatencies.push(performance.now() - sentAt);
    await answer;
    await stream.ended;
  }
  console.log(`cross-replica cancel, ${CANCEL_SAMPLES} turns: owner's turn.cancelled p50 ${ms(percentile(cancelLatencies, 0.5))}, p99 ${ms(percentile(cancelLatencies, 0.99))}, max ${ms(Math.max(...cancelLatencies))}`);
  console.log(`  the 202 through the non-owner: p50 ${ms(percentile(answerLatencies, 0.5))}, p99 ${ms(percentile(answerLatencies, 0.99))}`);

  // Live tail through the non-owner: arrival of each event there vs on the owner's own stream.
  const lags: number[] = [];
  for (let index = 0; index < TAIL_TURNS; index += 1) {
    const steps = Array.from({ length: 8 }, (_unused, step) => ({ text: `step ${step}`, calls: [{ name: 'absent', arguments: {} }], delayMs: 100 }));
    const stream = await openStream({ url: `${owner.baseUrl}/turns`, body: { agent: { id: `tail-${index}` }, input: 'go', model: { script: [...steps, { text: 'end' }] } } });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'turn.started');
    const tail = await openStream({ url: `${other.baseUrl}/turns/${turnId}/events`, method: 'GET', headers: { 'last-event-id': '1' } });
    const seenOwner = new Map<string, number>();
    const seenTail = new Map<string, number>();
    stream.response.on('data', () => {
      for (const message of stream.messages) if (message.id !== undefined && !seenOwner.has(message.id)) seenOwner.set(message.id, performance.now());
    });
    tail.response.on('data', () => {
      for (const message of tail.messages) if (message.id !== undefined && !seenTail.has(message.id)) seenTail.set(message.id, performance.now());
    });
    await Promise.all([stream.ended, tail.ended]);
    for (const [id, at] of seenTail) {
      const ownAt = seenOwner.get(id);
      if (ownAt !== undefined) lags.push(at - ownAt);
    }
  }
  console.log(`live tail through a non-owner, ${lags.length} events: lag behind the owner's stream p50 ${ms(percentile(lags, 0.5))}, p99 ${ms(percentile(lags, 0.99))}, max ${ms(Math.max(...lags))}`);

  // Orphans: a replica with running turns is killed; another must end them.
  const detection: number[] = [];
  for (let round = 0; round < ORPHAN_ROUNDS; round += 1) {
    const doomed = await start(`bench-doomed-${round}`);
    const turnIds: string[] = [];
    for (let index = 0; index < ORPHAN_TURNS; index += 1) {
      const stream = await openStream({ url: `${doomed.baseUrl}/turns`, body: longTurn(`orphan-${round}-${index}`) });
      turnIds.push(String(stream.response.headers['turn-id']));
      await stream.waitFor((message) => message.event === 'turn.started');
      stream.request.on('error', () => undefined);
      stream.response.on('error', () => undefined);
    }
    // Let a heartbeat or two pass, as for a replica that had been running a while.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const killedAt = performance.now();
    await doomed.crash();
    const pending = new Set(turnIds);
    while (pending.size > 0 && performance.now() - killedAt < 60_000) {
      for (const turnId of [...pending]) {
        const record = (await (await fetch(`${owner.baseUrl}/turns/${turnId}`)).json()) as { status: string };
        if (record.status === 'interrupted') {
          pending.delete(turnId);
          detection.push(performance.now() - killedAt);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (pending.size > 0) throw new Error(`${pending.size} turns of the killed replica were still running after 60 s`);
  }
  console.log(
    `orphan detection, kill -9 with ${ORPHAN_TURNS} running turns × ${ORPHAN_ROUNDS}: all interrupted after p50 ${(percentile(detection, 0.5) / 1000).toFixed(1)} s, max ${(Math.max(...detection) / 1000).toFixed(1)} s (bound 20 s)`,
  );

  // Retries: 20 identical idempotent requests at once over both replicas.
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_unused, index) =>
      fetch(`${[owner, other][index % 2]?.baseUrl}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': 'bench-20' },
        body: JSON.stringify({ agent: { id: 'idempotent' }, input: 'once', model: { script: [{ text: 'once', delayMs: 200 }] } }),
      }),
    ),
  );
  const turnIds = new Set(answers.map((answer) => answer.headers.get('turn-id')));
  console.log(`idempotency: 20 concurrent identical POSTs over 2 replicas made ${turnIds.size} turn(s); ${answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true').length} answers replayed`);
  if (turnIds.size !== 1) process.exitCode = 1;
} finally {
  await Promise.all(replicas.map((replica) => replica.stop()));
  await schema.drop();
}
