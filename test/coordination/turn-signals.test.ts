import { pino } from 'pino';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical-json.js';
import { idempotencyClaim, idempotencyScope } from '../../src/turns/coordination/idempotency-key.js';
import { LocalTurnSignals } from '../../src/turns/coordination/local-turn-signals.js';
import { PostgresTurnSignals } from '../../src/turns/coordination/postgres-turn-signals.js';
import { SignalWaiter } from '../../src/turns/coordination/signal-waiter.js';
import { TEST_POSTGRES_URL } from '../support/postgres-schema.js';

const logger = pino({ level: 'silent' });
const heard = (signals: { subscribe: LocalTurnSignals['subscribe'] }, topic: 'cancel' | 'agent', id: string, timeoutMs = 15_000) =>
  new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      unsubscribe();
      resolve(false);
    }, timeoutMs);
    const unsubscribe = signals.subscribe(topic, id, () => {
      clearTimeout(timer);
      unsubscribe();
      resolve(true);
    });
  });

describe('canonical JSON and idempotency claims', () => {
  it('sorts keys at every depth, drops undefined members and keeps arrays in order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' }, u: undefined })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson({ '\u00e9': 1, e: 2, E: 3 })).toBe('{"E":3,"e":2,"\u00e9":1}');
    expect(canonicalJson([undefined, null, 1e21, 'a"b'])).toBe('[null,null,1e+21,"a\\"b"]');
  });

  it('gives the same claim for the same body in any key order, and another for any other value', () => {
    const one = idempotencyClaim({ scope: 'server', key: 'k', body: { agent: { id: 'a' }, input: 'x' } });
    expect(idempotencyClaim({ scope: 'server', key: 'k', body: { input: 'x', agent: { id: 'a' } } })).toEqual(one);
    expect(idempotencyClaim({ scope: 'server', key: 'k', body: { input: 'y', agent: { id: 'a' } } }).bodyHash).not.toBe(one.bodyHash);
  });

  it('scopes keys to the token digest with auth on, and to the server with auth off', () => {
    expect(idempotencyScope({ authEnabled: false, authorization: 'Bearer anything' })).toBe('server');
    const scope = idempotencyScope({ authEnabled: true, authorization: 'Bearer secret-token' });
    expect(scope).toMatch(/^[0-9a-f]{64}$/);
    expect(scope).not.toContain('secret');
    expect(idempotencyScope({ authEnabled: true, authorization: 'bearer  secret-token ' })).toBe(scope);
    expect(idempotencyScope({ authEnabled: true, authorization: 'Bearer other-token' })).not.toBe(scope);
  });
});

describe('signals', () => {
  it('delivers in-process signals to the listeners of that topic and id only', async () => {
    const signals = new LocalTurnSignals();
    const other = heard(signals, 'cancel', 'turn-2', 200);
    const mine = heard(signals, 'cancel', 'turn-1');
    await signals.publish('cancel', 'turn-1');
    expect(await mine).toBe(true);
    expect(await other).toBe(false);
  });

  it('remembers a signal that came while nobody waited, so the next wait returns at once', async () => {
    const signals = new LocalTurnSignals();
    const waiter = new SignalWaiter({ signals, topic: 'agent', id: 'a' });
    await signals.publish('agent', 'a');
    await new Promise((resolve) => setImmediate(resolve));
    // At once: settled before the next turn of the event loop, not after its 60 s poll.
    const next = new Promise((resolve) => setImmediate(() => {
      resolve('waited');
    }));
    expect(await Promise.race([waiter.wait(60_000).then(() => 'at once'), next])).toBe('at once');
    waiter.dispose();
  });

  describe('over PostgreSQL', () => {
    let first: PostgresTurnSignals;
    let second: PostgresTurnSignals;
    beforeAll(async () => {
      first = await PostgresTurnSignals.connect({ connectionString: TEST_POSTGRES_URL, logger });
      second = await PostgresTurnSignals.connect({ connectionString: TEST_POSTGRES_URL, logger });
    });
    afterAll(async () => {
      await first.close();
      await second.close();
    });

    it('carries a signal from one process to another, and ignores payloads that are not ours', async () => {
      const id = `turn-${Math.random()}`;
      const arrival = heard(second, 'cancel', id);
      await first.publish('cancel', id);
      expect(await arrival).toBe(true);
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      await client.query(`select pg_notify('turn_runtime', 'bogus'), pg_notify('turn_runtime', 'nope:${id}'), pg_notify('turn_runtime', ':')`);
      await client.end();
      const after = heard(second, 'cancel', id);
      await first.publish('cancel', id);
      expect(await after).toBe(true);
    });

    it('listens again after its connection is killed, and wakes its waiters once', async () => {
      const id = `agent-${Math.random()}`;
      const waiter = new SignalWaiter({ signals: second, topic: 'agent', id });
      const pid = second.backendProcessId;
      expect(pid).toBeTypeOf('number');
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      await client.query('select pg_terminate_backend($1)', [pid]);
      await client.end();
      // Woken by the reconnect (signals may have been missed), well before the poll interval.
      await waiter.wait(30_000);
      expect(second.backendProcessId).not.toBe(pid);
      expect(second.backendProcessId).toBeTypeOf('number');
      const arrival = heard(second, 'agent', id);
      await first.publish('agent', id);
      expect(await arrival).toBe(true);
      waiter.dispose();
    });
  });
});
