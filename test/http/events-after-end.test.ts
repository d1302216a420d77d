import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

describe('GET /turns/:id/events after the end of the turn', () => {
  let runtime: TestRuntime;
  let turnId: string;
  let all: Record<string, unknown>[];
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  beforeAll(async () => {
    process.on('warning', onWarning);
    runtime = await startTestRuntime();
    const first = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'ended' }, input: 'x', model: { script: [{ text: 'one two three' }] } } });
    await first.ended;
    turnId = String(first.response.headers['turn-id']);
    all = eventsOf(first);
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    await runtime.close();
  });

  it('sends what is after Last-Event-ID and closes at once, starting with retry:', async () => {
    for (const [headers, from] of [[{}, 0], [{ 'last-event-id': '2' }, 2]] as const) {
      const stream = await openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events`, method: 'GET', headers });
      await stream.ended;
      expect(stream.response.statusCode).toBe(200);
      expect(eventsOf(stream)).toEqual(all.slice(from));
      expect(stream.retries).toEqual(['3000']);
    }
    const ndjson = await fetch(`${runtime.baseUrl}/turns/${turnId}/events?after=1`, { headers: { accept: 'application/x-ndjson' } });
    const lines = (await ndjson.text()).trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(lines).toEqual(all.slice(1));
  });

  it('answers 204 when Last-Event-ID or ?after= is at or past the terminal event, for every format', async () => {
    const last = all.length;
    const requests: [string, Record<string, string>][] = [
      ['', { 'last-event-id': String(last) }],
      ['', { 'last-event-id': String(last + 100) }],
      [`?after=${last}`, {}],
      [`?after=${last + 1}`, { accept: 'application/x-ndjson' }],
      [`?after=${last}`, { accept: 'application/json' }],
    ];
    for (const [query, headers] of requests) {
      const response = await fetch(`${runtime.baseUrl}/turns/${turnId}/events${query}`, { headers });
      expect(response.status, `${query} ${JSON.stringify(headers)}`).toBe(204);
      expect(await response.text()).toBe('');
    }
    const reconnects = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${runtime.baseUrl}/turns/${turnId}/events`, { headers: { 'last-event-id': String(last), accept: 'text/event-stream' } })),
    );
    expect(reconnects.map((response) => response.status)).toEqual(Array.from({ length: 20 }, () => 204));
    expect(warnings.filter((warning) => warning.includes('MaxListeners'))).toEqual([]);
  });

  it('refuses anything but a non-negative decimal integer with 400 invalid_request', async () => {
    // (A header's leading space is HTTP's own whitespace, so ' 5' is tried in the query only.)
    for (const value of ['0x10', '1e3', '', ' 5', '-1', '1.0', '+3', 'abc', '99999999999999999']) {
      const byQuery = await fetch(`${runtime.baseUrl}/turns/${turnId}/events?after=${encodeURIComponent(value)}`);
      expect(byQuery.status, `?after=${JSON.stringify(value)}`).toBe(400);
      if (value.startsWith(' ')) continue;
      const byHeader = await fetch(`${runtime.baseUrl}/turns/${turnId}/events`, { headers: { 'last-event-id': value } });
      expect(byHeader.status, `Last-Event-ID ${JSON.stringify(value)}`).toBe(400);
      expect((await readJson(byHeader)).error.code).toBe('invalid_request');
    }
  });

  it('ends the stream of a running turn at its end even when Last-Event-ID is past everything it will send', async () => {
    // Running until cancelled below: the reader attaches to a running turn however slowly it gets there.
    const owner = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'ahead' }, input: 'x', model: { script: [{ text: 'soon', delayMs: 30_000 }] } } });
    const running = String(owner.response.headers['turn-id']);
    await owner.waitFor((message) => message.event === 'turn.started');
    const ahead = await openStream({ url: `${runtime.baseUrl}/turns/${running}/events`, method: 'GET', headers: { 'last-event-id': '1000' } });
    expect(ahead.response.statusCode).toBe(200);
    expect((await fetch(`${runtime.baseUrl}/turns/${running}/cancel`, { method: 'POST' })).status).toBe(202);
    await Promise.all([owner.ended, ahead.ended]);
    expect(ahead.messages).toEqual([]);
    expect(ahead.retries).toEqual(['3000']);
  });
});
