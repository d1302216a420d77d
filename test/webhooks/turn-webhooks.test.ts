import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

const SECRET = `whsec_${Buffer.from('a test key of enough bytes').toString('base64')}`;

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A webhook receiver on 127.0.0.1 that answers the statuses it is given, then 200. */
async function startReceiver(statuses: number[]): Promise<{ server: Server; url: string; host: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.statusCode = statuses.shift() ?? 200;
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/hooks`, host: `127.0.0.1:${port}`, received };
}

async function until<T>(read: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const turnBody = (url: string) => ({ agent: { id: 'hooked' }, input: 'hi', model: { script: [{ text: 'done' }] }, webhook: { url } });

describe('turn webhooks', () => {
  const runtimes: TestRuntime[] = [];
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(runtimes.map((runtime) => runtime.close()));
    for (const server of servers) server.close();
  });

  it('POSTs turn.completed signed as Standard Webhooks do, retrying after a 500 with the same webhook-id', async () => {
    const receiver = await startReceiver([500]);
    servers.push(receiver.server);
    const runtime = await startTestRuntime({ env: { WEBHOOK_SECRET: SECRET, WEB_FETCH_ALLOW_HOSTS: receiver.host } });
    runtimes.push(runtime);
    const response = await fetch(`${runtime.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(turnBody(receiver.url)) });
    expect(response.status).toBe(200);
    const turn = await readJson(response);

    await until(() => (receiver.received.length >= 2 ? true : undefined), 'the retried delivery');
    const [first, second] = receiver.received;
    if (first === undefined || second === undefined) throw new Error('two deliveries expected');
    expect(first.headers['webhook-id']).toBe(second.headers['webhook-id']);
    const verifier = new Webhook(SECRET);
    for (const delivery of [first, second]) {
      const headers = { 'webhook-id': String(delivery.headers['webhook-id']), 'webhook-timestamp': String(delivery.headers['webhook-timestamp']), 'webhook-signature': String(delivery.headers['webhook-signature']) };
      expect(verifier.verify(delivery.body, headers)).toEqual({ type: 'turn.completed', id: turn.id, agentId: 'hooked', status: 'completed' });
    }
    // A signature made with another key does not verify.
    const forged = new Webhook(`whsec_${Buffer.from('some other key, not ours').toString('base64')}`);
    expect(() => forged.verify(first.body, { 'webhook-id': String(first.headers['webhook-id']), 'webhook-timestamp': String(first.headers['webhook-timestamp']), 'webhook-signature': String(first.headers['webhook-signature']) })).toThrow();

    const attempts = await until(async () => {
      const stored = await runtime.webhooks.listAttempts('turn', turn.id);
      return stored.length >= 2 ? stored : undefined;
    }, 'both attempts stored');
    expect(attempts.map((attempt) => [attempt.attempt, attempt.outcome, attempt.statusCode])).toEqual([
      [1, 'retrying', 500],
      [2, 'delivered', 200],
    ]);
  });

  it('refuses at creation (400, no turn) a literal private address, a non-http scheme, http:// to a host not allow-listed, and any webhook without a secret', async () => {
    const runtime = await startTestRuntime({ env: { WEBHOOK_SECRET: SECRET } });
    runtimes.push(runtime);
    for (const url of ['https://10.0.0.7/hook', 'https://[::1]/hook', 'ftp://hooks.example/x', 'http://hooks.example/x', 'https://user:pw@hooks.example/x', 'not a url']) {
      const response = await fetch(`${runtime.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(turnBody(url)) });
      expect(response.status, url).toBe(400);
      const body = await readJson(response);
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.issues[0].path).toEqual(['webhook', 'url']);
      expect(response.headers.get('turn-id')).toBeNull();
    }
    const unsigned = await startTestRuntime();
    runtimes.push(unsigned);
    const response = await fetch(`${unsigned.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(turnBody('https://hooks.example/x')) });
    expect(response.status).toBe(400);
    expect((await readJson(response)).error.message).toContain('WEBHOOK_SECRET');
  });

  it('stores a delivery refused because the name resolves to a private address as failed, with the reason, and does not retry it', async () => {
    const receiver = await startReceiver([]);
    servers.push(receiver.server);
    const runtime = await startTestRuntime({
      env: { WEBHOOK_SECRET: SECRET },
      lookup: (hostname) => Promise.resolve(hostname === 'hooks.example' ? [{ address: '127.0.0.1', family: 4 }] : []),
    });
    runtimes.push(runtime);
    const response = await fetch(`${runtime.baseUrl}/turns`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(turnBody('https://hooks.example/hook')) });
    expect(response.status).toBe(200);
    const turn = await readJson(response);
    const attempts = await until(async () => {
      const stored = await runtime.webhooks.listAttempts('turn', turn.id);
      return stored.length > 0 ? stored : undefined;
    }, 'the refused attempt');
    expect(attempts[0]?.outcome).toBe('failed');
    expect(attempts[0]?.error).toMatch(/refused.*hooks\.example.*(loopback|private|127\.0\.0\.1)/i);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(await runtime.webhooks.listAttempts('turn', turn.id)).toHaveLength(1);
    expect(receiver.received).toHaveLength(0);
  });
});
