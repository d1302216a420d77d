import BetterSqlite3 from 'better-sqlite3';
import type { Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { eventsOf, openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

type Event = Record<string, unknown> & { type: string; seq: number };

async function storedEvents(runtime: TestRuntime, turnId: string): Promise<Event[]> {
  return ((await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}/events`, { headers: { accept: 'application/json' } }))) as { events: Event[] }).events;
}

/** Runs SQL on the service's own SQLite file through a second connection (WAL lets both in). */
function onDatabase(runtime: TestRuntime, sql: string): void {
  const database = new BetterSqlite3(path.join(runtime.dataDir, 'turns.sqlite'));
  try {
    database.exec(sql);
  } finally {
    database.close();
  }
}

/** `count` deltas of `size` characters: an answer as a model streams it in tiny pieces. */
function tinyDeltas(count: number, size: number): string[] {
  return Array.from({ length: count }, (_, index) => String(index % 10).repeat(size));
}

describe('what a client is sent is what the store holds', () => {
  let provider: FakeResponsesProvider;
  let runtime: TestRuntime;
  beforeAll(async () => {
    provider = await startFakeResponsesProvider({ recordRequests: false });
    runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0' } });
  });
  afterAll(async () => {
    await runtime.close();
    await provider.close();
  });

  it('streams and stores a 200 KB answer sent in 7-character deltas, coalesced, with exact Last-Event-ID replay', async () => {
    // 28,572 deltas in one burst: one store batch of that many rows once broke SQLite's bound-parameter limit.
    const deltas = tinyDeltas(28_572, 7);
    provider.enqueue({ text: deltas });
    const stream = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'long-answer' }, input: 'write a lot', model: { name: 'gpt-5.1' } } });
    await stream.ended;
    const turnId = String(stream.response.headers['turn-id']);
    const streamed = eventsOf(stream) as Event[];
    expect(streamed.at(-1)).toMatchObject({ type: 'turn.completed', output: deltas.join('') });

    const stored = await storedEvents(runtime, turnId);
    expect(stored).toEqual(streamed);
    expect(stored.map((event) => event.seq)).toEqual(stored.map((_, index) => index + 1));
    const messageDeltas = stored.filter((event) => event.type === 'message.delta');
    expect(messageDeltas.map((event) => event['delta']).join('')).toBe(deltas.join(''));
    // Coalesced to at most 1 KiB per event: a few hundred rows, not 28,572.
    expect(messageDeltas.length).toBeLessThan(400);
    expect(messageDeltas.every((event) => String(event['delta']).length <= 1_024)).toBe(true);
    expect(await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`))).toMatchObject({ status: 'completed', output: deltas.join('') });

    const middle = Math.floor(stored.length / 2);
    const replay = await openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events`, method: 'GET', headers: { 'last-event-id': String(middle) } });
    await replay.ended;
    expect(eventsOf(replay)).toEqual(stored.slice(middle));
  });

  it('a client that attaches while the turn waits quietly on its model (its in-memory window trimmed) is sent every event, as stored', async () => {
    provider.enqueue({ text: ['looking'], calls: [{ name: 'list_files', arguments: '{}' }, { name: 'list_files', arguments: '{"path":"."}' }] }, { text: ['found ', 'nothing'], headersDelayMs: 3_000 });
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { agent: { id: 'quiet-wait', tools: { computer: true } }, input: 'x', model: { name: 'gpt-5.1' } },
    });
    await stream.waitFor((message) => message.event === 'tool.completed');
    const turnId = String(stream.response.headers['turn-id']);
    // Past two sweeps of the quiet windows (QUIET_WINDOW_MS each): the run keeps no event in memory now, only the last seq.
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    const seenSeq = (eventsOf(stream).at(-1) as Event).seq;
    // From the start, from just before the last event, from a little further back (the store, then the run),
    // and from the last event itself (the run's window, empty now).
    const followers = [0, seenSeq - 1, seenSeq - 3, seenSeq].map((afterSeq) =>
      openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events`, method: 'GET', ...(afterSeq === 0 ? {} : { headers: { 'last-event-id': String(afterSeq) } }) }),
    );
    const attached = await Promise.all(followers);
    await Promise.all([stream.ended, ...attached.map((follower) => follower.ended)]);
    const streamed = eventsOf(stream) as Event[];
    expect(streamed.at(-1)).toMatchObject({ type: 'turn.completed', output: 'found nothing' });
    const stored = await storedEvents(runtime, turnId);
    expect(streamed).toEqual(stored);
    expect(attached.map((follower) => eventsOf(follower))).toEqual([stored, stored.slice(seenSeq - 1), stored.slice(seenSeq - 3), stored.slice(seenSeq)]);
  });

  it('retries a store write that fails for a moment: nothing is lost, the stream matches the store', async () => {
    provider.enqueue({ text: ['before the fault'], calls: [{ name: 'list_files', arguments: '{}' }] }, { text: ['after ', 'the ', 'fault'], headersDelayMs: 300 });
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { agent: { id: 'flaky-store', tools: { computer: true } }, input: 'x', model: { name: 'gpt-5.1' } },
    });
    await stream.waitFor((message) => message.event === 'tool.completed');
    // Every event insert fails for the next 400 ms (a locked or briefly unwritable database).
    onDatabase(
      runtime,
      `CREATE TABLE IF NOT EXISTS fault_window (until REAL);
       DELETE FROM fault_window; INSERT INTO fault_window VALUES (julianday('now') + 0.4 / 86400.0);
       CREATE TRIGGER IF NOT EXISTS transient_fault BEFORE INSERT ON turn_events
       WHEN julianday('now') < (SELECT until FROM fault_window) BEGIN SELECT RAISE(ABORT, 'injected transient fault'); END;`,
    );
    try {
      await stream.ended;
      const turnId = String(stream.response.headers['turn-id']);
      const streamed = eventsOf(stream) as Event[];
      expect(streamed.at(-1)).toMatchObject({ type: 'turn.completed', output: 'after the fault' });
      expect(await storedEvents(runtime, turnId)).toEqual(streamed);
    } finally {
      onDatabase(runtime, 'DROP TRIGGER IF EXISTS transient_fault;');
    }
  });

  it('ends the turn failed (store_error) when its events cannot be stored, and never sends what the store lacks', async () => {
    onDatabase(
      runtime,
      `CREATE TRIGGER lasting_fault BEFORE INSERT ON turn_events WHEN NEW.type = 'message.delta'
       BEGIN SELECT RAISE(ABORT, 'injected lasting fault'); END;`,
    );
    try {
      provider.enqueue({ text: ['this ', 'text ', 'cannot ', 'be ', 'stored'] });
      const stream = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'broken-store' }, input: 'x', model: { name: 'gpt-5.1' } } });
      await stream.ended;
      const turnId = String(stream.response.headers['turn-id']);
      const streamed = eventsOf(stream) as Event[];
      // turn.started is there unless it shared the failed batch with the deltas (then it was never sent either).
      expect(['turn.started,turn.failed', 'turn.failed']).toContain(streamed.map((event) => event.type).join(','));
      expect(streamed.map((event) => event.seq)).toEqual(streamed.map((_, index) => index + 1));
      expect(streamed.at(-1)).toMatchObject({ type: 'turn.failed', error: { code: 'store_error' } });
      expect(await storedEvents(runtime, turnId)).toEqual(streamed);
      expect(await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`))).toMatchObject({ status: 'failed', error: { code: 'store_error' } });
      expect((await readJson(await fetch(`${runtime.baseUrl}/readyz`))).runningTurns).toBe(0);
    } finally {
      onDatabase(runtime, 'DROP TRIGGER IF EXISTS lasting_fault;');
    }
  });
});

describe('consumers that fall behind', () => {
  let provider: FakeResponsesProvider;
  let runtime: TestRuntime;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    provider = await startFakeResponsesProvider({ recordRequests: false });
    runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0' } });
    runtime.app.server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
  });
  afterAll(async () => {
    await runtime.close();
    await provider.close();
  });

  it('holds at most about a megabyte for a reader that stops reading, and serves it everything from the store when it resumes', async () => {
    // ~6 MB of answer in 1 KB deltas, streamed to a POST client and a tail that both stop reading.
    const deltas = tinyDeltas(6_000, 1_000);
    provider.enqueue({ text: deltas });
    const owner = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'stalled' }, input: 'x', model: { name: 'gpt-5.1' } } });
    const turnId = String(owner.response.headers['turn-id']);
    owner.response.pause();
    const tail = await openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events`, method: 'GET' });
    tail.response.pause();

    let mostBuffered = 0;
    for (;;) {
      const buffered = [...sockets].reduce((sum, socket) => sum + socket.writableLength, 0);
      mostBuffered = Math.max(mostBuffered, buffered);
      const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`));
      if (record.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (process.env['SHOW_BUFFERED'] !== undefined) process.stdout.write(`most buffered: ${mostBuffered}\n`);
    // Two stalled readers, at most ~1 MiB unsent each (plus one event), not most of the 6 MB turn.
    expect(mostBuffered).toBeLessThan(4 * 1024 * 1024);

    owner.response.resume();
    tail.response.resume();
    await Promise.all([owner.ended, tail.ended]);
    const stored = await storedEvents(runtime, turnId);
    expect(eventsOf(owner)).toEqual(stored);
    expect(eventsOf(tail)).toEqual(stored);
    expect(stored.at(-1)).toMatchObject({ type: 'turn.completed' });
  }, 60_000);

  it('serves a late reader of a long running turn from the store, then live, with nothing missing', async () => {
    provider.enqueue({ text: tinyDeltas(1_500, 1_000), calls: [{ name: 'list_files', arguments: '{}' }] }, { text: ['done'], headersDelayMs: 500 });
    const owner = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'late-reader', tools: { computer: true } }, input: 'x', model: { name: 'gpt-5.1' } } });
    const turnId = String(owner.response.headers['turn-id']);
    // Well over the in-memory window (64 events, 16 KiB) before the reader arrives.
    await owner.waitFor((message) => message.event === 'tool.completed', 30_000);
    const late = await openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events`, method: 'GET' });
    await Promise.all([owner.ended, late.ended]);
    expect(eventsOf(late)).toEqual(eventsOf(owner));
    expect(eventsOf(late).length).toBeGreaterThan(1_000);
    expect(eventsOf(late).at(-1)).toMatchObject({ type: 'turn.completed', output: 'done' });
  }, 60_000);
});
