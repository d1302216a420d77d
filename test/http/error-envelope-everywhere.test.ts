import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-http.js';
import { eventsOf, openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { waitUntil } from '../support/wait-until.js';

const valid = { agent: { id: 'acme' }, input: 'hi', model: { script: [{ text: 'hello' }] } };

function expectEnvelope(body: unknown, code: string): void {
  expect(body).toMatchObject({ error: { code, message: expect.any(String) as unknown } });
}

function portOf(runtime: TestRuntime): number {
  return (runtime.app.server.address() as AddressInfo).port;
}

describe('router and parser errors in the error envelope', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ env: { REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('accepts ids up to 200 characters (404 turn_not_found) and refuses longer ones with 400, never 414', async () => {
    const at200 = await fetch(`${runtime.baseUrl}/turns/${'a'.repeat(200)}`);
    expect(at200.status).toBe(404);
    expectEnvelope(await readJson(at200), 'turn_not_found');
    for (const length of [201, 5_000]) {
      for (const suffix of ['', '/events', '/tools']) {
        const response = await fetch(`${runtime.baseUrl}/turns/${'a'.repeat(length)}${suffix}`);
        expect(response.status, `${length}${suffix}`).toBe(400);
        expectEnvelope(await readJson(response), 'invalid_request');
      }
    }
    const cancel = await fetch(`${runtime.baseUrl}/turns/${'b'.repeat(150)}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(404);
  });

  it('answers bad percent-encoding with 400 invalid_request', async () => {
    for (const path of ['/turns/%E0%A4%A', '/turns/%zz/events', '/turns/%']) {
      const response = await fetch(`${runtime.baseUrl}${path}`);
      expect(response.status, path).toBe(400);
      expectEnvelope(await readJson(response), 'invalid_request');
    }
  });

  it('answers a malformed header line with 400 in the envelope', async () => {
    const answer = await rawRequest({ port: portOf(runtime), request: 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n' });
    expect(answer.status).toBe(400);
    expectEnvelope(JSON.parse(answer.body), 'invalid_request');
  });

  it('answers headers over the size limit with 431 in the envelope', async () => {
    const answer = await rawRequest({ port: portOf(runtime), request: `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n` });
    expect(answer.status).toBe(431);
    expectEnvelope(JSON.parse(answer.body), 'headers_too_large');
  });

  it('does not hold a body that declares more bytes than it sends: 408 request_timeout, connection closed, no turn', async () => {
    const body = JSON.stringify(valid);
    const answer = await rawRequest({
      port: portOf(runtime),
      request: `POST /turns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${body.length + 50}\r\n\r\n${body}`,
      // Without a request timeout the server would wait for the missing bytes for ever.
      timeoutMs: 8_000,
    });
    expect(answer.status).toBe(408);
    expectEnvelope(JSON.parse(answer.body), 'request_timeout');
    expect((await readJson(await fetch(`${runtime.baseUrl}/readyz`))).runningTurns).toBe(0);
  });

  it('does not cut off an answer that streams longer than the request timeout', async () => {
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { ...valid, model: { script: [{ text: 'late', delayMs: 2_500 }] } },
    });
    await stream.ended;
    expect(eventsOf(stream).at(-1)).toMatchObject({ type: 'turn.completed', output: 'late' });
  });
});

describe('the rate limit', () => {
  it('answers 429 rate_limited with a message that says the limit', async () => {
    const runtime = await startTestRuntime({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      for (let index = 0; index < 2; index += 1) expect((await fetch(`${runtime.baseUrl}/turns/nope`)).status).toBe(404);
      const limited = await fetch(`${runtime.baseUrl}/turns/nope`);
      expect(limited.status).toBe(429);
      const body = await readJson(limited);
      expectEnvelope(body, 'rate_limited');
      expect(body.error.message).toMatch(/\b2 requests a minute\b/);
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await runtime.close();
    }
  });
});

describe('while the server drains (app.close in progress)', () => {
  it('keeps /healthz 200 and reads of running turns working; every other route is 503 shutting_down in the envelope', async () => {
    // The turn thinks for 5 s, ample time for the checks below while it still runs on a loaded
    // machine, and ends well within the 20 s grace.
    const runtime = await startTestRuntime({ env: { SHUTDOWN_GRACE_MS: '20000' } });
    const owner = await openStream({ url: `${runtime.baseUrl}/turns`, body: { ...valid, model: { script: [{ text: 'finished while draining', delayMs: 5_000 }] } } });
    const turnId = String(owner.response.headers['turn-id']);
    await owner.waitFor((message) => message.event === 'turn.started');
    const closing = runtime.close();
    try {
      // preClose has begun: the service is draining, the server still listens.
      await waitUntil('the service to drain', () => (runtime.service.draining ? true : undefined));

      expect((await fetch(`${runtime.baseUrl}/healthz`)).status).toBe(200);
      const ready = await fetch(`${runtime.baseUrl}/readyz`);
      expect(ready.status).toBe(503);
      expectEnvelope(await readJson(ready), 'shutting_down');
      const post = await fetch(`${runtime.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(valid) });
      expect(post.status).toBe(503);
      expectEnvelope(await readJson(post), 'shutting_down');
      for (const path of ['/openapi.json', '/nope', `/turns/${turnId}/cancel`]) {
        const response = await fetch(`${runtime.baseUrl}${path}`, { method: path.endsWith('/cancel') ? 'POST' : 'GET' });
        expect(response.status, path).toBe(503);
        expectEnvelope(await readJson(response), 'shutting_down');
      }

      const record = await fetch(`${runtime.baseUrl}/turns/${turnId}`);
      expect(record.status).toBe(200);
      expect(await readJson(record)).toMatchObject({ id: turnId, status: 'running' });
      expect((await fetch(`${runtime.baseUrl}/turns/${turnId}/tools`)).status).toBe(200);
      const tail = await openStream({ url: `${runtime.baseUrl}/turns/${turnId}/events`, method: 'GET' });
      await Promise.all([tail.ended, owner.ended]);
      expect(eventsOf(tail).at(-1)).toMatchObject({ type: 'turn.completed', output: 'finished while draining' });
      expect(eventsOf(tail)).toEqual(eventsOf(owner));
    } finally {
      await closing;
    }
  });
});
