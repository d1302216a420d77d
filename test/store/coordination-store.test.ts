import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdmissionRequest } from '../../src/store/coordination-store.js';
import { sql } from 'kysely';
import { openStoreDatabase, openTurnStore, openTurnStoreOn } from '../../src/store/open-turn-store.js';
import type { TurnStore } from '../../src/store/turn-store.js';
import type { NewTurn } from '../../src/store/turn-record.js';
import { createPostgresSchema } from '../support/postgres-schema.js';

interface StoreLocation {
  open(): Promise<TurnStore>;
  remove(): Promise<void>;
}

const dialects: { readonly dialect: string; readonly locate: () => Promise<StoreLocation> }[] = [
  {
    dialect: 'SQLite',
    locate: async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'coordination-test-'));
      return { open: () => openTurnStore({ databaseUrl: undefined, dataDir }), remove: () => rm(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    dialect: 'PostgreSQL',
    locate: async () => {
      const schema = await createPostgresSchema();
      return {
        open: () => schema.whileSchemasAreStable(() => openTurnStore({ databaseUrl: schema.url, dataDir: path.join(tmpdir(), 'unused-by-postgres') })),
        remove: () => schema.drop(),
      };
    },
  },
];

const AT = '2026-12-01T10:00:00.000Z';

function newTurn(id: string, agentId = 'agent-1'): NewTurn {
  return {
    record: {
      id,
      agentId,
      kind: 'text',
      status: 'running',
      model: 'scripted',
      createdAt: AT,
      finishedAt: null,
      iterations: 0,
      output: null,
      error: null,
      outcome: null,
      usage: { inputTokens: 0, outputTokens: 0 },
    },
    owner: 'process-a',
    toolsJson: '[]',
    unavailableJson: '[]',
    providerToolsJson: '[]',
  };
}

const enqueue = (id: string, queueLimit = 8, mode: 'enqueue' | 'reject' | 'interrupt' = 'enqueue'): AdmissionRequest => ({ turn: newTurn(id), agent: { mode, queueLimit } });
const finish = (store: TurnStore, turnId: string) =>
  store.finishTurn(turnId, [], { status: 'completed', iterations: 1, output: 'ok', error: null, outcome: 'final_answer', usage: { inputTokens: 0, outputTokens: 0 }, finishedAt: AT });
const promote = (store: TurnStore, turnId: string) => store.promoteQueuedTurn({ turnId, agentId: 'agent-1', owner: 'process-a', now: AT });

describe.each(dialects)('coordination in the store on $dialect', ({ dialect, locate }) => {
  let location: StoreLocation;
  let store: TurnStore;
  beforeEach(async () => {
    location = await locate();
    store = await location.open();
  });
  afterEach(async () => {
    await store.close();
    await location.remove();
  });

  it('admits the first turn of an agent with its lease and queues the next ones in order', async () => {
    expect(await store.admitTurn(enqueue('t1'))).toEqual({ kind: 'running' });
    expect(await store.admitTurn(enqueue('t2'))).toEqual({ kind: 'queued', position: 1, holderTurnId: 't1' });
    expect(await store.admitTurn(enqueue('t3'))).toEqual({ kind: 'queued', position: 2, holderTurnId: 't1' });
    expect(await store.getTurn('t2')).toMatchObject({ status: 'queued', queuedAt: AT });
    expect((await store.getTurn('t1'))?.queuedAt).toBeUndefined();
    // Another agent is free.
    expect(await store.admitTurn({ turn: newTurn('other', 'agent-2'), agent: { mode: 'reject', queueLimit: 8 } })).toEqual({ kind: 'running' });
  });

  it('refuses while busy: reject at once, enqueue beyond the limit, creating nothing', async () => {
    await store.admitTurn(enqueue('t1'));
    expect(await store.admitTurn(enqueue('r1', 8, 'reject'))).toEqual({ kind: 'busy', reason: 'running', queued: 0 });
    await store.admitTurn(enqueue('t2', 1));
    expect(await store.admitTurn(enqueue('t3', 1))).toEqual({ kind: 'busy', reason: 'queue_full', queued: 1 });
    expect(await store.getTurn('r1')).toBeUndefined();
    expect(await store.getTurn('t3')).toBeUndefined();
  });

  it('promotes only the head of the queue, once the holder has ended, and says gone for a turn no longer queued', async () => {
    await store.admitTurn(enqueue('t1'));
    await store.admitTurn(enqueue('t2'));
    await store.admitTurn(enqueue('t3'));
    expect(await promote(store, 't2')).toBe('waiting');
    await finish(store, 't1');
    // t1 ended without giving the lease back (its process died): the lease is taken over.
    expect(await promote(store, 't3')).toBe('waiting');
    expect(await promote(store, 't2')).toBe('promoted');
    expect(await store.getTurn('t2')).toMatchObject({ status: 'running', queuedAt: AT });
    expect(await promote(store, 't3')).toBe('waiting');
    await store.releaseAgentLease({ agentId: 'agent-1', turnId: 't2' });
    expect(await promote(store, 't3')).toBe('promoted');
    expect(await promote(store, 't3')).toBe('gone');
  });

  it('puts an interrupt ahead of enqueued turns', async () => {
    await store.admitTurn(enqueue('t1'));
    await store.admitTurn(enqueue('t2'));
    expect(await store.admitTurn(enqueue('now', 8, 'interrupt'))).toEqual({ kind: 'queued', position: 1, holderTurnId: 't1' });
    await finish(store, 't1');
    expect(await promote(store, 't2')).toBe('waiting');
    expect(await promote(store, 'now')).toBe('promoted');
  });

  it('keeps an idempotency key per scope: the same body replays, another is refused, another scope is new', async () => {
    const claim = { scope: 'token-a', key: 'k', bodyHash: 'h1' };
    expect(await store.admitTurn({ turn: newTurn('i1'), idempotency: claim })).toEqual({ kind: 'running' });
    expect(await store.admitTurn({ turn: newTurn('i2'), idempotency: claim })).toEqual({ kind: 'replay', turnId: 'i1' });
    expect(await store.admitTurn({ turn: newTurn('i3'), idempotency: { ...claim, bodyHash: 'h2' } })).toEqual({ kind: 'key_reused', turnId: 'i1' });
    expect(await store.admitTurn({ turn: newTurn('i4'), idempotency: { ...claim, scope: 'token-b' } })).toEqual({ kind: 'running' });
    expect(await store.getTurn('i2')).toBeUndefined();
    expect(await store.findIdempotencyKey(claim)).toEqual({ turnId: 'i1', bodyHash: 'h1' });
    await store.purgeCoordination({ before: '2026-12-01T10:00:00.001Z' });
    expect(await store.findIdempotencyKey(claim)).toBeUndefined();
  });

  it('gives the agent back with the end of the turn that holds it, and only that one', async () => {
    await store.admitTurn(enqueue('t1'));
    await store.admitTurn({ turn: newTurn('other-agent', 'agent-2') });
    const ended = { status: 'completed', iterations: 1, output: 'ok', error: null, outcome: 'final_answer', usage: { inputTokens: 0, outputTokens: 0 }, finishedAt: AT } as const;
    // A turn that does not hold agent-1's lease cannot give it back.
    await store.finishTurn('other-agent', [], ended, { releaseAgent: 'agent-1' });
    expect(await store.admitTurn(enqueue('t2'))).toMatchObject({ kind: 'queued', holderTurnId: 't1' });
    await store.finishTurn('t1', [], ended, { releaseAgent: 'agent-1' });
    expect(await promote(store, 't2')).toBe('promoted');
  });

  it('stores the first event with an admission that starts the turn, and not with one that queues it', async () => {
    const started = (turnId: string) => ({ seq: 1, type: 'turn.started' as const, json: JSON.stringify({ type: 'turn.started', turnId, seq: 1 }) });
    expect(await store.admitTurn({ ...enqueue('t1'), startedEvent: started('t1') })).toEqual({ kind: 'running' });
    expect(await store.admitTurn({ ...enqueue('t2'), startedEvent: started('t2') })).toMatchObject({ kind: 'queued' });
    expect(await store.admitTurn({ turn: newTurn('alone', 'agent-2'), startedEvent: started('alone') })).toEqual({ kind: 'running' });
    expect(await store.listEvents('t1', { afterSeq: 0, limit: 10 })).toEqual([started('t1')]);
    expect(await store.listEvents('alone', { afterSeq: 0, limit: 10 })).toEqual([started('alone')]);
    expect(await store.listEvents('t2', { afterSeq: 0, limit: 10 })).toEqual([]);
  });

  it('keeps the first cancel request of a turn', async () => {
    await store.admitTurn(enqueue('t1'));
    await store.requestCancel({ turnId: 't1', reason: 'superseded', at: AT });
    await store.requestCancel({ turnId: 't1', reason: 'cancel_requested', at: AT });
    expect(await store.listCancelRequests(['t1', 'absent'])).toEqual([{ turnId: 't1', reason: 'superseded' }]);
    expect(await store.listCancelRequests([])).toEqual([]);
  });

  it('stamps a turn\'s first heartbeat when its admission runs, not when its request came', async () => {
    // Admitted 30 s after the request arrived (a long wait for a connection, say): its heartbeat is 30 s younger.
    await store.admitTurn({ ...enqueue('late'), now: () => '2026-12-01T10:00:30.000Z' });
    await store.admitTurn({ turn: newTurn('prompt', 'agent-2') });
    const interrupted = await store.interruptOrphans({ staleBefore: '2026-12-01T10:00:10.000Z', now: '2026-12-01T10:00:20.000Z' });
    expect(interrupted).toEqual(['prompt']);
    expect(await store.getTurn('late')).toMatchObject({ status: 'running' });
  });

  it.runIf(dialect === 'PostgreSQL')('ends each orphan once when two replicas sweep at the same time: one terminal event, no error', async () => {
    const second = await location.open();
    try {
      const started = (turnId: string) => ({ seq: 1, type: 'turn.started' as const, json: JSON.stringify({ type: 'turn.started', turnId, seq: 1 }) });
      for (let index = 0; index < 12; index += 1) await store.admitTurn({ turn: newTurn(`orphan-${index}`, `agent-${index}`), startedEvent: started(`orphan-${index}`) });
      const sweeps = await Promise.all([store, second, store, second].map((sweeper) => sweeper.interruptOrphans({ staleBefore: '2026-12-01T10:00:10.000Z', now: '2026-12-01T10:00:20.000Z' })));
      expect(sweeps.flat().sort()).toEqual(Array.from({ length: 12 }, (_unused, index) => `orphan-${index}`).sort());
      for (let index = 0; index < 12; index += 1) {
        const events = await store.listEvents(`orphan-${index}`, { afterSeq: 0, limit: 10 });
        expect(events.map((event) => event.type)).toEqual(['turn.started', 'turn.failed']);
      }
    } finally {
      await second.close();
    }
  });

  it.runIf(dialect === 'PostgreSQL')('agrees across connections: 20 concurrent identical keys make one turn, 20 enqueues fill the queue exactly', async () => {
    const second = await location.open();
    try {
      const stores = [store, second];
      const claim = { scope: 'server', key: 'twenty', bodyHash: 'same' };
      const keyed = await Promise.all(Array.from({ length: 20 }, (_unused, index) => stores[index % 2]!.admitTurn({ turn: newTurn(`k${index}`, 'keyed'), idempotency: claim })));
      expect(keyed.filter((admission) => admission.kind === 'running')).toHaveLength(1);
      expect(keyed.filter((admission) => admission.kind === 'replay')).toHaveLength(19);

      const queued = await Promise.all(Array.from({ length: 20 }, (_unused, index) => stores[index % 2]!.admitTurn(enqueue(`q${index}`, 3))));
      const kinds = queued.map((admission) => admission.kind).sort();
      expect(kinds.filter((kind) => kind === 'running')).toHaveLength(1);
      expect(kinds.filter((kind) => kind === 'queued')).toHaveLength(3);
      expect(kinds.filter((kind) => kind === 'busy')).toHaveLength(16);
      const positions = queued.flatMap((admission) => (admission.kind === 'queued' ? [admission.position] : [])).sort();
      expect(positions).toEqual([1, 2, 3]);
    } finally {
      await second.close();
    }
  });
});

describe('liveness on PostgreSQL under a saturated pool', () => {
  it('heartbeats and sweeps while every connection of the shared pool is busy', async () => {
    const schema = await createPostgresSchema();
    const database = await schema.whileSchemasAreStable(() => openStoreDatabase({ databaseUrl: schema.url, dataDir: path.join(tmpdir(), 'unused-by-postgres') }));
    const store = await schema.whileSchemasAreStable(() => openTurnStoreOn(database));
    try {
      await store.admitTurn({ turn: newTurn('live') });
      // As many sleeps as the shared pool has connections: anything else on that pool waits for them.
      let aSleepEnded = false;
      const sleeps = Promise.all(
        Array.from({ length: 10 }, async () => {
          await sql`select pg_sleep(2)`.execute(database.db);
          aSleepEnded = true;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await store.heartbeat(['live'], '2026-12-01T10:01:00.000Z')).toEqual(['live']);
      expect(await store.interruptOrphans({ staleBefore: '2026-12-01T10:00:30.000Z', now: '2026-12-01T10:01:00.000Z' })).toEqual([]);
      expect(aSleepEnded).toBe(false);
      await sleeps;
    } finally {
      await store.close();
      await schema.drop();
    }
  });
});
