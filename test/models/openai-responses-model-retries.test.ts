import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelError } from '../../src/models/model-client.js';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { createTestModel, respondCollecting, testApiKey } from './model-test-kit.js';

/**
 * The idle timeout of the tests that need one: short enough to wait for, and far longer than a
 * loaded machine needs between two parts of a local answer, so only the provider's hang trips it.
 */
const IDLE_TIMEOUT_MS = 2_000;

describe('OpenAI Responses model: retries', () => {
  let provider: FakeResponsesProvider;
  beforeEach(async () => {
    provider = await startFakeResponsesProvider();
  });
  afterEach(async () => {
    await provider.close();
  });

  it('retries a 429 after the wait its retry-after header asks for, then succeeds', async () => {
    provider.enqueue({ status: 429, retryAfter: 2, error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, { text: 'Made it.' });
    const { model, sleeps, records } = createTestModel(provider);

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('Made it.');
    expect(provider.requestCount).toBe(2);
    expect(sleeps).toEqual([2000]);
    expect(records).toContainEqual(expect.objectContaining({ level: 40, status: 429, attempt: 1, delayMs: 2000 }));
  });

  it('prefers retry-after-ms, and caps a provider asking for a very long wait', async () => {
    provider.enqueue({ status: 429, retryAfterMs: 1500, retryAfter: 9 }, { status: 503, retryAfter: 3600 }, { text: 'ok' });
    const { model, sleeps } = createTestModel(provider);

    await respondCollecting(model);

    expect(sleeps).toEqual([1500, 60_000]);
  });

  it('retries 500s with growing, jittered waits', async () => {
    provider.enqueue({ status: 500 }, { status: 502 }, { status: 500 }, { text: 'Third time lucky.' });
    const { model, sleeps } = createTestModel(provider, { random: () => 0.5 });

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('Third time lucky.');
    expect(sleeps).toEqual([375, 750, 1500]);
  });

  it.each([408, 409, 429, 500, 503, 504])('retries HTTP %i', async (status) => {
    provider.enqueue({ status }, { text: 'ok' });
    const { model } = createTestModel(provider);

    await expect(respondCollecting(model)).resolves.toMatchObject({ response: { text: 'ok' } });
    expect(provider.requestCount).toBe(2);
  });

  it('retries a connection reset before any answer', async () => {
    provider.enqueue({ reset: true }, { text: 'Reconnected.' });
    const { model } = createTestModel(provider);

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('Reconnected.');
    expect(provider.requestCount).toBe(2);
  });

  it('retries a stream that breaks after the headers but before any output', async () => {
    provider.enqueue({ text: 'lost', destroy: { afterEvents: 2 } }, { text: 'lost too', endEarly: { afterEvents: 3 } }, { text: 'Whole.' });
    const { model } = createTestModel(provider);

    const { response, deltas } = await respondCollecting(model);

    expect(response.text).toBe('Whole.');
    expect(deltas).toEqual(['Whole.']);
    expect(provider.requestCount).toBe(3);
  });

  it('does not retry once text was forwarded: the break surfaces and the text is not repeated', async () => {
    provider.enqueue({ text: ['Half ', 'a ', 'sentence'], destroy: true }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider);
    const deltas: string[] = [];

    const failure = model.respond(
      { input: [{ type: 'message', role: 'user', content: 'hi' }], tools: [], toolChoice: 'auto' },
      { signal: new AbortController().signal, onTextDelta: (delta) => deltas.push(delta) },
    );

    await expect(failure).rejects.toThrow(ModelError);
    await expect(failure).rejects.toThrow(/after output had started/);
    expect(deltas).toEqual(['Half ', 'a ', 'sentence']);
    expect(provider.requestCount).toBe(1);
  });

  it('does not retry a 400, and surfaces the provider message without the API key', async () => {
    provider.enqueue(
      { status: 400, error: { message: `Incorrect API key provided: ${testApiKey}. You can find your key at …`, type: 'invalid_request_error', code: 'invalid_api_key' } },
      { text: 'must not be fetched' },
    );
    const { model, sleeps } = createTestModel(provider);

    const error: unknown = await respondCollecting(model).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ status: 400, message: expect.stringContaining('Incorrect API key provided') });
    expect((error as Error).message).not.toContain(testApiKey);
    expect((error as Error).message).not.toContain('SECRET');
    expect(provider.requestCount).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it.each([401, 403, 404, 422])('does not retry HTTP %i', async (status) => {
    provider.enqueue({ status, error: { message: `nope ${status}` } }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider);

    await expect(respondCollecting(model)).rejects.toMatchObject({ name: 'ModelError', status, message: expect.stringContaining(`nope ${status}`) });
    expect(provider.requestCount).toBe(1);
  });

  it('does not retry a 5xx the provider marks with x-should-retry: false', async () => {
    provider.enqueue({ status: 500, headers: { 'x-should-retry': 'false' } }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider);

    await expect(respondCollecting(model)).rejects.toMatchObject({ status: 500 });
    expect(provider.requestCount).toBe(1);
  });

  it('gives up after maxRetries and says so, keeping the status', async () => {
    provider.setDefault({ status: 503, error: { message: 'Service overloaded' } });
    const { model, sleeps } = createTestModel(provider, { maxRetries: 2 });

    await expect(respondCollecting(model)).rejects.toMatchObject({
      name: 'ModelError',
      status: 503,
      message: expect.stringMatching(/Service overloaded.*gave up after 3 attempts/),
    });
    expect(provider.requestCount).toBe(3);
    expect(sleeps).toHaveLength(2);
  });

  it('never retries when maxRetries is 0', async () => {
    provider.enqueue({ status: 429 }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider, { maxRetries: 0 });

    await expect(respondCollecting(model)).rejects.toMatchObject({ status: 429 });
    expect(provider.requestCount).toBe(1);
  });

  it('times out a request that hangs before any output and retries it', async () => {
    provider.enqueue({ text: 'never', hang: { afterEvents: 2 } }, { text: 'Second try.' });
    const { model } = createTestModel(provider, { requestTimeoutMs: IDLE_TIMEOUT_MS });

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('Second try.');
    expect((await provider.requests[0]!.ended).how).toBe('client-disconnected');
  });

  it('times out a request whose headers never come, and retries it', async () => {
    provider.enqueue({ text: 'late', headersDelayMs: 30_000 }, { text: 'On time.' });
    const { model } = createTestModel(provider, { requestTimeoutMs: IDLE_TIMEOUT_MS });

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('On time.');
    expect((await provider.requests[0]!.ended).how).toBe('client-disconnected');
  });

  it('does not retry a request that hangs after text was forwarded', async () => {
    provider.enqueue({ text: 'Started but', hang: true }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider, { requestTimeoutMs: IDLE_TIMEOUT_MS });

    await expect(respondCollecting(model)).rejects.toThrow(/timed out.*after output had started/);
    expect(provider.requestCount).toBe(1);
  });

  it('keeps a whole response whose connection breaks after the terminal event', async () => {
    provider.enqueue({ text: 'All here.', destroy: { afterEvents: 1_000 } }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider);

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('All here.');
    expect(provider.requestCount).toBe(1);
  });

  it('keeps a whole response whose stream stays open after the terminal event', async () => {
    provider.enqueue({ text: 'All here.', hang: { afterEvents: 1_000 } }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider, { requestTimeoutMs: IDLE_TIMEOUT_MS });

    const { response } = await respondCollecting(model);

    expect(response.text).toBe('All here.');
    expect(provider.requestCount).toBe(1);
  });

  it('reports an unreachable provider as a ModelError after retrying', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => { resolve(port); });
      });
    });
    const { model, sleeps } = createTestModel(provider, { baseUrl: `http://127.0.0.1:${closedPort}/v1`, maxRetries: 1 });

    const error: unknown = await respondCollecting(model).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toMatch(/could not reach the model provider.*ECONNREFUSED.*gave up after 2 attempts/);
    expect((error as ModelError).status).toBeUndefined();
    expect(sleeps).toHaveLength(1);
  });
});
