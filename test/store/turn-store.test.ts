import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTurnStore } from '../../src/store/open-turn-store.js';
import type { TurnStore } from '../../src/store/turn-store.js';
import type { NewTurn, StoredEvent, TurnFinish } from '../../src/store/turn-record.js';
import type { TurnEvent } from '../../src/events/turn-events.js';
import { createPostgresSchema } from '../support/postgres-schema.js';

/** Where a store lives: it can be opened more than once, then removed. */
interface StoreLocation {
  open(): Promise<TurnStore>;
  remove(): Promise<void>;
}

const dialects: { readonly dialect: string; readonly locate: () => Promise<StoreLocation> }[] = [
  {
    dialect: 'SQLite',
    locate: async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'turn-store-test-'));
      return {
        open: () => openTurnStore({ databaseUrl: undefined, dataDir }),
        remove: () => rm(dataDir, { recursive: true, force: true }),
      };
    },
  },
  {
    dialect: 'PostgreSQL',
    locate: async () => {
      const schema = await createPostgresSchema();
      const dataDir = path.join(tmpdir(), 'unused-by-postgres');
      return {
        open: () => schema.whileSchemasAreStable(() => openTurnStore({ databaseUrl: schema.url, dataDir })),
        remove: () => schema.drop(),
      };
    },
  },
];

const CREATED_AT = '2026-11-30T10:00:00.000Z';

function newTurn(id: string, overrides: { owner?: string; agentId?: string; createdAt?: string; task?: NewTurn['task'] } = {}): NewTurn {
  return {
    record: {
      id,
      agentId: overrides.agentId ?? 'agent-1',
      kind: overrides.task === undefined ? 'text' : 'workflow_task',
      status: 'running',
      model: 'scripted',
      createdAt: overrides.createdAt ?? CREATED_AT,
      finishedAt: null,
      iterations: 0,
      output: null,
      error: null,
      outcome: null,
      usage: { inputTokens: 0, outputTokens: 0 },
    },
    ...(overrides.task === undefined ? {} : { task: overrides.task }),
    owner: overrides.owner ?? 'process-a',
    toolsJson: '[{"name":"read_file","strict":false}]',
    unavailableJson: '[{"source":"web.web_search","reason":"no provider"}]',
    providerToolsJson: '[{"type":"function","name":"read_file"}]',
  };
}

/** A stored event as the turn writes it: its JSON text is kept byte for byte. */
function event(turnId: string, seq: number, delta = `part ${seq}`): StoredEvent {
  const body: TurnEvent = { type: 'message.delta', turnId, seq, at: CREATED_AT, iteration: 1, delta };
  return { seq, type: body.type, json: JSON.stringify(body) };
}

const seqs = (events: readonly StoredEvent[]) => events.map((stored) => stored.seq);

describe.each(dialects)('KyselyTurnStore on $dialect', ({ locate }) => {
  let location: StoreLocation | undefined;
  let store: TurnStore;

  beforeEach(async () => {
    const located = await locate();
    try {
      store = await located.open();
    } catch (error) {
      await located.remove();
      throw error;
    }
    location = located;
  });

  afterEach(async () => {
    const located = location;
    location = undefined;
    if (located === undefined) return;
    try {
      await store.close();
    } finally {
      await located.remove();
    }
  });

  it('creates a running turn with empty counters, its tools and the first provider tool list', async () => {
    await store.createTurn(newTurn('t1'));
    expect(await store.getTurn('t1')).toEqual({
      id: 't1',
      agentId: 'agent-1',
      kind: 'text',
      status: 'running',
      model: 'scripted',
      createdAt: CREATED_AT,
      finishedAt: null,
      iterations: 0,
      output: null,
      error: null,
      outcome: null,
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    expect(await store.getTurnTools('t1')).toEqual({
      turnId: 't1',
      kind: 'text',
      toolsJson: '[{"name":"read_file","strict":false}]',
      unavailableJson: '[{"source":"web.web_search","reason":"no provider"}]',
      providerTools: [{ iteration: 1, json: '[{"type":"function","name":"read_file"}]' }],
    });
    expect(await store.getTask('t1')).toBeUndefined();
  });

  it('keeps a workflow task with its result schema', async () => {
    const task = { instructions: 'Find the date.', resultSchema: { type: 'object', properties: { date: { type: 'string', format: 'date' } }, required: ['date'] } };
    await store.createTurn(newTurn('task-1', { task }));
    expect(await store.getTask('task-1')).toEqual(task);
    expect((await store.getTurn('task-1'))?.kind).toBe('workflow_task');
  });

  it('answers undefined for a turn it does not have', async () => {
    expect(await store.getTurn('nope')).toBeUndefined();
    expect(await store.getTurnTools('nope')).toBeUndefined();
    expect(await store.getTask('nope')).toBeUndefined();
    expect(await store.listEvents('nope', { afterSeq: 0, limit: 10 })).toEqual([]);
  });

  it('refuses a second turn with the same id, leaving the first intact', async () => {
    await store.createTurn(newTurn('t1'));
    await expect(store.createTurn(newTurn('t1', { agentId: 'agent-2' }))).rejects.toThrow();
    expect((await store.getTurn('t1'))?.agentId).toBe('agent-1');
  });

  it('appends events in batches and lists them in order, JSON text byte for byte', async () => {
    await store.createTurn(newTurn('t1'));
    const first = [event('t1', 1), event('t1', 2, 'naïve “quotes” \\ and \u2028 and 🎉'), event('t1', 3, '\u0000 escaped')];
    await store.appendEvents('t1', first);
    await store.appendEvents('t1', []);
    await store.appendEvents('t1', [event('t1', 4), event('t1', 5)]);
    const listed = await store.listEvents('t1', { afterSeq: 0, limit: 100 });
    expect(listed).toEqual([...first, event('t1', 4), event('t1', 5)]);
  });

  it('lists the events after a seq, at most `limit`, and only of that turn', async () => {
    await store.createTurn(newTurn('t1'));
    await store.createTurn(newTurn('t2'));
    await store.appendEvents('t1', [1, 2, 3, 4, 5, 6].map((seq) => event('t1', seq)));
    await store.appendEvents('t2', [1, 2, 3].map((seq) => event('t2', seq)));
    expect(seqs(await store.listEvents('t1', { afterSeq: 2, limit: 3 }))).toEqual([3, 4, 5]);
    expect(seqs(await store.listEvents('t1', { afterSeq: 5, limit: 3 }))).toEqual([6]);
    expect(seqs(await store.listEvents('t1', { afterSeq: 6, limit: 3 }))).toEqual([]);
    expect((await store.listEvents('t2', { afterSeq: 0, limit: 10 })).every((stored) => stored.json.includes('"turnId":"t2"'))).toBe(true);
  });

  it('stores a batch of 20,000 events (more than one statement may bind), all or nothing', async () => {
    await store.createTurn(newTurn('t1'));
    const many = Array.from({ length: 20_000 }, (_, index) => event('t1', index + 1, 'x'.repeat(7)));
    await store.appendEvents('t1', many);
    const listed: StoredEvent[] = [];
    while (listed.length < many.length) listed.push(...(await store.listEvents('t1', { afterSeq: listed.length, limit: 5_000 })));
    expect(listed).toEqual(many);
    // A clash in the last chunk undoes the earlier chunks of the same batch too.
    const clashing = Array.from({ length: 2_500 }, (_, index) => event('t1', 20_001 + index));
    clashing.push(event('t1', 5));
    await expect(store.appendEvents('t1', clashing)).rejects.toThrow();
    expect(seqs(await store.listEvents('t1', { afterSeq: 19_999, limit: 10 }))).toEqual([20_000]);
    await store.finishTurn('t1', Array.from({ length: 9_000 }, (_, index) => event('t1', 20_001 + index)), {
      status: 'completed', finishedAt: CREATED_AT, iterations: 1, output: 'x', error: null, outcome: 'final_answer', usage: { inputTokens: 0, outputTokens: 0 },
    });
    expect(seqs(await store.listEvents('t1', { afterSeq: 28_999, limit: 10 }))).toEqual([29_000]);
  });

  it('keeps the progress of a running turn in its record, and not after it has ended', async () => {
    await store.createTurn(newTurn('t1'));
    await store.recordProgress('t1', { iterations: 2, usage: { inputTokens: 300, outputTokens: 40 } });
    expect(await store.getTurn('t1')).toMatchObject({ status: 'running', iterations: 2, usage: { inputTokens: 300, outputTokens: 40 } });
    await store.finishTurn('t1', [event('t1', 1)], {
      status: 'completed', finishedAt: CREATED_AT, iterations: 3, output: 'x', error: null, outcome: 'final_answer', usage: { inputTokens: 500, outputTokens: 60 },
    });
    await store.recordProgress('t1', { iterations: 9, usage: { inputTokens: 1, outputTokens: 1 } });
    expect(await store.getTurn('t1')).toMatchObject({ status: 'completed', iterations: 3, usage: { inputTokens: 500, outputTokens: 60 } });
  });

  it('orders events by number, not as text', async () => {
    await store.createTurn(newTurn('t1'));
    await store.appendEvents('t1', Array.from({ length: 12 }, (_, index) => event('t1', index + 1)));
    expect(seqs(await store.listEvents('t1', { afterSeq: 9, limit: 10 }))).toEqual([10, 11, 12]);
  });

  it('writes a batch all or nothing: a clashing seq stores none of it', async () => {
    await store.createTurn(newTurn('t1'));
    await store.appendEvents('t1', [event('t1', 1), event('t1', 2)]);
    await expect(store.appendEvents('t1', [event('t1', 3), event('t1', 2)])).rejects.toThrow();
    expect(seqs(await store.listEvents('t1', { afterSeq: 0, limit: 10 }))).toEqual([1, 2]);
  });

  it('lists turns newest first, by agent and by status, at most `limit`', async () => {
    await store.createTurn(newTurn('old', { agentId: 'agent-a', createdAt: '2026-11-30T09:00:00.000Z' }));
    await store.createTurn(newTurn('mid', { agentId: 'agent-b', createdAt: '2026-11-30T10:00:00.000Z' }));
    await store.createTurn(newTurn('new', { agentId: 'agent-a', createdAt: '2026-11-30T11:00:00.000Z' }));
    await store.finishTurn('old', [event('old', 1)], { status: 'failed', finishedAt: '2026-11-30T09:00:01.000Z', iterations: 1, output: null, error: { code: 'model_error', message: 'x' }, outcome: 'model_error', usage: { inputTokens: 0, outputTokens: 0 } });
    expect((await store.listTurns({ limit: 10 })).map((turn) => turn.id)).toEqual(['new', 'mid', 'old']);
    expect((await store.listTurns({ limit: 2 })).map((turn) => turn.id)).toEqual(['new', 'mid']);
    expect((await store.listTurns({ agentId: 'agent-a', limit: 10 })).map((turn) => turn.id)).toEqual(['new', 'old']);
    expect((await store.listTurns({ status: 'failed', limit: 10 })).map((turn) => [turn.id, turn.error?.code])).toEqual([['old', 'model_error']]);
    expect(await store.listTurns({ agentId: 'nobody', limit: 10 })).toEqual([]);
  });

  it('finishes a turn with its last events and maps every field back', async () => {
    await store.createTurn(newTurn('t1'));
    await store.appendEvents('t1', [event('t1', 1)]);
    const finish: TurnFinish = {
      status: 'completed',
      finishedAt: '2026-11-30T10:00:05.000Z',
      iterations: 3,
      output: 'The release date is 2026-12-01.',
      result: { date: '2026-12-01', sources: ['https://example.com'], confidence: 0.9, verified: true, note: null },
      error: null,
      outcome: 'result_submitted',
      usage: { inputTokens: 1234, outputTokens: 56 },
    };
    await store.finishTurn('t1', [event('t1', 2), event('t1', 3)], finish);
    expect(await store.getTurn('t1')).toEqual({
      id: 't1',
      agentId: 'agent-1',
      kind: 'text',
      status: 'completed',
      model: 'scripted',
      createdAt: CREATED_AT,
      finishedAt: '2026-11-30T10:00:05.000Z',
      iterations: 3,
      output: 'The release date is 2026-12-01.',
      result: { date: '2026-12-01', sources: ['https://example.com'], confidence: 0.9, verified: true, note: null },
      error: null,
      outcome: 'result_submitted',
      usage: { inputTokens: 1234, outputTokens: 56 },
    });
    expect(seqs(await store.listEvents('t1', { afterSeq: 0, limit: 10 }))).toEqual([1, 2, 3]);
  });

  it('keeps a failed turn’s error, including its reason, and no result', async () => {
    await store.createTurn(newTurn('t1'));
    const error = { code: 'max_iterations', message: 'the turn used all 2 iterations before the model finished', reason: 'iteration_exhausted' };
    await store.finishTurn('t1', [], {
      status: 'failed',
      finishedAt: '2026-11-30T10:01:00.000Z',
      iterations: 3,
      output: null,
      error,
      outcome: 'iteration_exhausted',
      usage: { inputTokens: 1, outputTokens: 2 },
    });
    const turn = await store.getTurn('t1');
    expect(turn).toMatchObject({ status: 'failed', error, output: null, outcome: 'iteration_exhausted' });
    expect(turn).not.toHaveProperty('result');
  });

  it('finishes atomically: when the last events clash, the record stays running', async () => {
    await store.createTurn(newTurn('t1'));
    await store.appendEvents('t1', [event('t1', 1)]);
    await expect(
      store.finishTurn('t1', [event('t1', 1)], {
        status: 'completed',
        finishedAt: '2026-11-30T10:00:05.000Z',
        iterations: 1,
        output: 'done',
        error: null,
        outcome: 'final_answer',
        usage: { inputTokens: 1, outputTokens: 1 },
      }),
    ).rejects.toThrow();
    expect(await store.getTurn('t1')).toMatchObject({ status: 'running', finishedAt: null, output: null });
  });

  it('finishes a turn whose final output has a NUL character, storing U+FFFD in its place', async () => {
    await store.createTurn(newTurn('t1'));
    await store.finishTurn('t1', [event('t1', 1)], {
      status: 'completed',
      finishedAt: '2026-11-30T10:00:05.000Z',
      iterations: 1,
      output: 'binary\u0000junk',
      error: null,
      outcome: 'final_answer',
      usage: { inputTokens: 1, outputTokens: 1 },
    });
    const turn = await store.getTurn('t1');
    expect(turn?.status).toBe('completed');
    expect(turn?.output).toBe('binary\uFFFDjunk');
  });

  it('keeps the provider tool list of each iteration where it changed, in iteration order', async () => {
    await store.createTurn(newTurn('t1'));
    await store.recordProviderTools('t1', 4, '[{"name":"b"}]');
    await store.recordProviderTools('t1', 2, '[{"name":"a"}]');
    await expect(store.recordProviderTools('t1', 2, '[{"name":"again"}]')).rejects.toThrow();
    expect((await store.getTurnTools('t1'))?.providerTools).toEqual([
      { iteration: 1, json: '[{"type":"function","name":"read_file"}]' },
      { iteration: 2, json: '[{"name":"a"}]' },
      { iteration: 4, json: '[{"name":"b"}]' },
    ]);
  });

  it('interrupts the orphans of a previous life and of stale replicas, and leaves every other turn alone', async () => {
    await store.createTurn(newTurn('mine-old', { owner: 'process-a' }));
    await store.createTurn(newTurn('stale', { owner: 'process-b' }));
    await store.createTurn(newTurn('alive', { owner: 'process-b' }));
    await store.createTurn(newTurn('done', { owner: 'process-a' }));
    await store.appendEvents('mine-old', [event('mine-old', 1), event('mine-old', 2), event('mine-old', 3)]);
    await store.appendEvents('alive', [event('alive', 1)]);
    await store.finishTurn('done', [event('done', 1)], {
      status: 'completed',
      finishedAt: '2026-11-30T10:00:01.000Z',
      iterations: 1,
      output: 'ok',
      error: null,
      outcome: 'final_answer',
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    await store.heartbeat(['mine-old', 'alive', 'done'], '2026-11-30T10:05:00.000Z');

    const now = '2026-11-30T10:06:00.000Z';
    const interrupted = await store.interruptOrphans({ owner: 'process-a', staleBefore: '2026-11-30T10:04:00.000Z', now });
    expect(interrupted.sort()).toEqual(['mine-old', 'stale']);

    const error = { code: 'interrupted', message: 'the process running this turn stopped before the turn finished' };
    expect(await store.getTurn('mine-old')).toMatchObject({ status: 'interrupted', finishedAt: now, error });
    expect(await store.getTurn('stale')).toMatchObject({ status: 'interrupted', finishedAt: now, error });

    const [last] = await store.listEvents('mine-old', { afterSeq: 3, limit: 10 });
    expect(last?.seq).toBe(4);
    expect(last?.type).toBe('turn.failed');
    expect(JSON.parse(last?.json ?? '{}')).toEqual({
      type: 'turn.failed',
      turnId: 'mine-old',
      seq: 4,
      at: now,
      error,
      iterations: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    expect(seqs(await store.listEvents('stale', { afterSeq: 0, limit: 10 }))).toEqual([1]);

    expect(await store.getTurn('alive')).toMatchObject({ status: 'running', finishedAt: null });
    expect(seqs(await store.listEvents('alive', { afterSeq: 0, limit: 10 }))).toEqual([1]);
    expect(await store.getTurn('done')).toMatchObject({ status: 'completed', output: 'ok' });
    expect(seqs(await store.listEvents('done', { afterSeq: 0, limit: 10 }))).toEqual([1]);

    expect(await store.interruptOrphans({ owner: 'process-a', staleBefore: '2026-11-30T10:04:00.000Z', now })).toEqual([]);
  });

  it('does not revive a finished turn with a heartbeat', async () => {
    await store.createTurn(newTurn('t1', { owner: 'process-b' }));
    await store.finishTurn('t1', [], {
      status: 'cancelled',
      finishedAt: '2026-11-30T10:00:01.000Z',
      iterations: 0,
      output: null,
      error: { code: 'cancelled', message: 'the turn was cancelled on request', reason: 'cancel_requested' },
      outcome: 'cancelled',
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    await store.heartbeat(['t1'], '2026-11-30T11:00:00.000Z');
    await store.heartbeat([], '2026-11-30T11:00:00.000Z');
    expect(await store.interruptOrphans({ owner: 'process-b', staleBefore: '2026-11-30T12:00:00.000Z', now: '2026-11-30T12:00:00.000Z' })).toEqual([]);
    expect((await store.getTurn('t1'))?.status).toBe('cancelled');
  });

  it('keeps each agent’s todo list and replaces it whole on write', async () => {
    expect(await store.readTodos('agent-1')).toEqual([]);
    await store.writeTodos('agent-1', [
      { content: 'Read the brief', status: 'completed' },
      { content: 'Draft', status: 'in_progress' },
    ]);
    await store.writeTodos('agent-2', [{ content: 'Other agent', status: 'pending' }]);
    await store.writeTodos('agent-1', [{ content: 'Only this', status: 'pending' }]);
    expect(await store.readTodos('agent-1')).toEqual([{ content: 'Only this', status: 'pending' }]);
    expect(await store.readTodos('agent-2')).toEqual([{ content: 'Other agent', status: 'pending' }]);
    await store.writeTodos('agent-1', []);
    expect(await store.readTodos('agent-1')).toEqual([]);
  });

  it('opens an existing store again without migrating twice, keeping its data', async () => {
    await store.createTurn(newTurn('t1'));
    await store.appendEvents('t1', [event('t1', 1)]);
    await store.close();
    store = await location!.open();
    const again = await location!.open();
    try {
      expect((await store.getTurn('t1'))?.status).toBe('running');
      expect(seqs(await again.listEvents('t1', { afterSeq: 0, limit: 10 }))).toEqual([1]);
    } finally {
      await again.close();
    }
  });
});
