import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { waitUntil } from '../support/wait-until.js';

async function waitForStatus(runtime: TestRuntime, turnId: string, status: string, timeoutMs = 15_000): Promise<any> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`));
    if (record.status === status) return record;
    if (performance.now() > deadline) throw new Error(`turn ${turnId} is ${record.status}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** PIDs of processes whose command line contains `needle` (read from /proc, as a person would check). */
async function processesMatching(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(path.join('/proc', entry, 'cmdline'), 'utf8').catch(() => '');
    if (commandLine.split('\0').join(' ').includes(needle)) pids.push(Number(entry));
  }
  return pids;
}

describe('cancellation', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('aborts a running tool when the client disconnects mid-tool, and stores the turn cancelled', async () => {
    const marker = `sleep 3${Math.floor(Math.random() * 1000)}`;
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: {
        agent: { id: 'disconnect-tool', tools: { computer: true } },
        input: 'run something slow',
        model: { script: [{ calls: [{ name: 'run_command', arguments: { command: marker } }] }, { text: 'never reached' }] },
      },
    });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'tool.started');
    // Wait until the sandbox has really started the command.
    const deadline = performance.now() + 10_000;
    while ((await processesMatching(marker)).length === 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await processesMatching(marker)).length).toBeGreaterThan(0);

    stream.destroy();
    // The command sleeps for most of an hour: only the departure can end the turn within the wait.
    const record = await waitForStatus(runtime, turnId, 'cancelled');
    expect(record.error).toMatchObject({ code: 'cancelled', reason: 'client_disconnected' });

    const stored = await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}/events`, { headers: { accept: 'application/json' } }));
    const types = stored.events.map((event: { type: string }) => event.type);
    expect(types.at(-1)).toBe('turn.cancelled');
    expect(stored.events.at(-1)).toMatchObject({ reason: 'client_disconnected' });
    const failed = stored.events.find((event: { type: string }) => event.type === 'tool.failed');
    expect(failed).toMatchObject({ name: 'run_command', error: { code: 'aborted' } });
    expect(failed.error.message).toMatch(/^aborted after [\d.]+ m?s: the turn was cancelled$/);
    expect(types).not.toContain('message.completed');

    const gone = performance.now() + 10_000;
    while ((await processesMatching(marker)).length > 0 && performance.now() < gone) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await processesMatching(marker)).toEqual([]);
  }, 60_000);

  it('aborts the model call when the client disconnects while the model is thinking', async () => {
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { agent: { id: 'disconnect-model' }, input: 'think', model: { script: [{ text: 'late', delayMs: 30_000 }] } },
    });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'turn.started');
    stream.destroy();
    // Well before the model's 30 s delay would end the turn.
    const record = await waitForStatus(runtime, turnId, 'cancelled');
    expect(record.error.reason).toBe('client_disconnected');
  });

  it('cancels on request: 202 with the record, the stream ends with turn.cancelled, a second cancel is 409', async () => {
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { agent: { id: 'cancel-me' }, input: 'think', model: { script: [{ text: 'late', delayMs: 30_000 }] } },
    });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'turn.started');
    const response = await fetch(`${runtime.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' });
    expect(response.status).toBe(202);
    expect(await readJson(response)).toMatchObject({ id: turnId, status: 'cancelled', error: { reason: 'cancel_requested' } });
    await stream.ended;
    expect(eventsOf(stream).at(-1)).toMatchObject({ type: 'turn.cancelled', reason: 'cancel_requested' });

    const again = await fetch(`${runtime.baseUrl}/turns/${turnId}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(again.status).toBe(409);
    expect((await readJson(again)).error.code).toBe('turn_not_running');
  });

  it('ends a turn that outlives limits.timeoutMs as cancelled with reason timeout', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ agent: { id: 'slowpoke' }, input: 'x', model: { script: [{ delayMs: 30_000 }] }, limits: { timeoutMs: 200 } }),
    });
    const body = await readJson(response);
    expect(body).toMatchObject({ status: 'cancelled', error: { reason: 'timeout' } });
    expect(body.events.at(-1)).toMatchObject({ type: 'turn.cancelled', reason: 'timeout' });
  });
});

describe('GET /turns/:id/events', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('replays after Last-Event-ID (or ?after=) and ends with the terminal event', async () => {
    const first = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { agent: { id: 'replay' }, input: 'x', model: { script: [{ text: 'one' }] } },
    });
    await first.ended;
    const turnId = String(first.response.headers['turn-id']);
    const all = eventsOf(first);

    const replay = await openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events`, method: 'GET', headers: { 'last-event-id': '2' } });
    await replay.ended;
    expect(eventsOf(replay)).toEqual(all.slice(2));
    expect(replay.messages[0]?.id).toBe('3');

    const byQuery = await openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events?after=1`, method: 'GET' });
    await byQuery.ended;
    expect(eventsOf(byQuery)).toEqual(all.slice(1));
  });

  it('tails a running turn live until its last event, and leaving it does not cancel the turn', async () => {
    // The model thinks for 30 s: the turn is still running however slowly the watchers attach, and
    // the test ends it with a cancel.
    const owner = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { agent: { id: 'tail' }, input: 'x', model: { script: [{ text: 'first', delayMs: 30_000 }] } },
    });
    const turnId = String(owner.response.headers['turn-id']);
    await owner.waitFor((message) => message.event === 'turn.started');

    const watcher = await openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events`, method: 'GET' });
    await watcher.waitFor((message) => message.event === 'turn.started');
    const quitter = await openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events`, method: 'GET' });
    await quitter.waitFor((message) => message.event === 'turn.started');
    quitter.destroy();
    await quitter.ended;
    expect((await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`))).status).toBe('running');

    expect((await fetch(`${runtime.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' })).status).toBe(202);
    await Promise.all([watcher.ended, owner.ended]);
    expect(eventsOf(watcher)).toEqual(eventsOf(owner));
    expect(eventsOf(watcher).at(-1)).toMatchObject({ type: 'turn.cancelled', reason: 'cancel_requested' });
  });

  it('refuses a malformed Last-Event-ID with 400', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns/anything/events`, { headers: { 'last-event-id': 'abc' } });
    expect(response.status).toBe(400);
    expect((await readJson(response)).error.code).toBe('invalid_request');
  });

  it('sends a ping comment while a turn is quiet', async () => {
    const quiet = await startTestRuntime({ env: { SSE_PING_MS: '50' } });
    try {
      // Quiet for 30 s unless cancelled: the pings are waited for, not counted over a fixed time.
      const stream = await openStream({
        url: `${quiet.baseUrl}/turns`,
        body: { agent: { id: 'quiet' }, input: 'x', model: { script: [{ text: 'ok', delayMs: 30_000 }] } },
      });
      await waitUntil('two pings', () => (stream.comments.filter((comment) => comment === ': ping').length >= 2 ? true : undefined), 15_000);
      await fetch(`${quiet.baseUrl}/turns/${String(stream.response.headers['turn-id'])}/cancel`, { method: 'POST' });
      await stream.ended;
    } finally {
      await quiet.close();
    }
  });
});
