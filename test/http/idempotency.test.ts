import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

/** `Idempotency-Key` on POST /turns, on one process with its SQLite store. */
describe('idempotent POST /turns', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  const body = (agentId: string, extra: Record<string, unknown> = {}) => ({
    agent: { id: agentId },
    input: 'answer',
    model: { script: [{ text: 'working', calls: [{ name: 'nothing_here', arguments: {} }], delayMs: 200 }, { text: 'answered' }] },
    ...extra,
  });
  const post = (payload: unknown, headers: Record<string, string>) =>
    fetch(`${runtime.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof payload === 'string' ? payload : JSON.stringify(payload) });

  it('refuses keys that are empty, too long, or not visible ASCII with 400, creating no turn', async () => {
    for (const key of ['', 'a'.repeat(201), 'has space', 'tab\there', 'caf\u00e9']) {
      const answer = await post(body('bad-keys'), { 'idempotency-key': key, accept: 'application/json' });
      expect(answer.status, JSON.stringify(key)).toBe(400);
      expect(answer.headers.get('turn-id')).toBeNull();
      const envelope = await readJson(answer);
      expect(envelope.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('idempotency-key') });
    }
    // The longest allowed key, with every visible character class, works.
    const longest = `!~${'k'.repeat(198)}`;
    expect((await post(body('bad-keys'), { 'idempotency-key': longest, accept: 'application/json' })).status).toBe(200);
  });

  it('answers a retry with the turn the key made: the same stream replayed, marked idempotent-replayed', async () => {
    const first = await openStream({ url: `${runtime.baseUrl}/turns`, body: body('replay'), headers: { 'idempotency-key': 'replay-1' } });
    const turnId = String(first.response.headers['turn-id']);
    expect(first.response.headers['idempotent-replayed']).toBeUndefined();
    await first.waitFor((message) => message.event === 'turn.started');

    // A retry while it runs follows it live to the end.
    const during = await openStream({ url: `${runtime.baseUrl}/turns`, body: body('replay'), headers: { 'idempotency-key': 'replay-1' } });
    expect(during.response.headers['turn-id']).toBe(turnId);
    expect(during.response.headers['idempotent-replayed']).toBe('true');
    await Promise.all([first.ended, during.ended]);
    expect(eventsOf(during)).toEqual(eventsOf(first));
    expect(eventsOf(first).at(-1)).toMatchObject({ type: 'turn.completed', output: 'answered' });

    // After the end: from the start, or after Last-Event-ID, then closed.
    const after = await openStream({ url: `${runtime.baseUrl}/turns`, body: body('replay'), headers: { 'idempotency-key': 'replay-1', 'last-event-id': '3' } });
    await after.ended;
    expect(eventsOf(after)).toEqual(eventsOf(first).filter((event) => Number(event['seq']) > 3));

    // In the Accept the retry asked for: JSON, the record with its events.
    const json = await post(body('replay'), { 'idempotency-key': 'replay-1', accept: 'application/json' });
    expect(json.headers.get('idempotent-replayed')).toBe('true');
    expect(json.headers.get('turn-id')).toBe(turnId);
    const record = await readJson(json);
    expect(record).toMatchObject({ id: turnId, status: 'completed', output: 'answered' });
    expect(record.events).toEqual(eventsOf(first));
  });

  it('compares bodies as canonical JSON: key order and spacing do not matter, any value does', async () => {
    const first = await readJson(await post(body('canonical'), { 'idempotency-key': 'canon', accept: 'application/json' }));
    const { agent, input, model } = body('canonical');
    const reordered = `{ "model": ${JSON.stringify(model, null, 2)},\n "input": ${JSON.stringify(input)}, "agent": ${JSON.stringify(agent)} }`;
    const again = await post(reordered, { 'idempotency-key': 'canon', accept: 'application/json' });
    expect(again.status).toBe(200);
    expect(again.headers.get('turn-id')).toBe(first.id);

    const changed = await post(body('canonical', { input: 'answer!' }), { 'idempotency-key': 'canon', accept: 'application/json' });
    expect(changed.status).toBe(422);
    expect((await readJson(changed)).error).toMatchObject({ code: 'idempotency_key_reused', message: expect.stringContaining(first.id) });
  });

  it('makes exactly one turn of 20 concurrent identical requests, and runs its command once', async () => {
    const payload = {
      agent: { id: 'twenty', tools: { computer: true } },
      input: 'count',
      model: { script: [{ calls: [{ name: 'run_command', arguments: { command: 'echo hit >> hits.txt' } }] }, { text: 'counted' }] },
      multitask: 'concurrent',
    };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(payload, { 'idempotency-key': 'twenty-at-once', accept: 'application/json' })));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 20 }, () => 200));
    expect(new Set(answers.map((answer) => answer.headers.get('turn-id'))).size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    for (const answer of answers) expect(await readJson(answer)).toMatchObject({ status: 'completed', output: 'counted' });
    expect(await readFile(path.join(runtime.dataDir, 'agents', 'twenty', 'home', 'hits.txt'), 'utf8')).toBe('hit\n');
  });

  it('does not cancel the turn when a retry’s client leaves, and keeps keys apart from requests without one', async () => {
    const first = await openStream({ url: `${runtime.baseUrl}/turns`, body: body('leaver'), headers: { 'idempotency-key': 'leaver' } });
    await first.waitFor((message) => message.event === 'turn.started');
    const retry = await openStream({ url: `${runtime.baseUrl}/turns`, body: body('leaver'), headers: { 'idempotency-key': 'leaver' } });
    await retry.waitFor((message) => message.event === 'turn.started');
    retry.destroy();
    await first.ended;
    expect(eventsOf(first).at(-1)).toMatchObject({ type: 'turn.completed' });

    const plain = await post(body('leaver', { multitask: 'concurrent' }), { accept: 'application/json' });
    expect(plain.headers.get('turn-id')).not.toBe(first.response.headers['turn-id']);
    expect(plain.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses a Last-Event-ID that is not a decimal integer on a retry', async () => {
    for (const lastEventId of ['0x10', '1e3', '-1', 'abc']) {
      const answer = await post(body('bad-last-id'), { 'idempotency-key': 'bad-last-id', 'last-event-id': lastEventId });
      expect(answer.status, lastEventId).toBe(400);
      expect((await readJson(answer)).error.code).toBe('invalid_request');
    }
  });
});

describe('idempotency keys with auth on', () => {
  let runtime: TestRuntime;
  const token = 'a-long-enough-test-token';
  beforeAll(async () => {
    runtime = await startTestRuntime({ env: { API_TOKEN: token } });
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('replays for the token that made the key, and a wrong token never learns the turn', async () => {
    const request = (authorization: string) =>
      fetch(`${runtime.baseUrl}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': 'scoped', authorization },
        body: JSON.stringify({ agent: { id: 'scoped' }, input: 'x', model: { script: [{ text: 'scoped answer' }] } }),
      });
    const first = await request(`Bearer ${token}`);
    expect(first.status).toBe(200);
    const again = await request(`bearer   ${token}`);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('turn-id')).toBe(first.headers.get('turn-id'));
    const stranger = await request('Bearer not-the-token-at-all');
    expect(stranger.status).toBe(403);
    expect(stranger.headers.get('turn-id')).toBeNull();
  });
});
