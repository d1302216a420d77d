import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/models/model-client.js';
import { ModelError } from '../../src/models/model-client.js';
import { sleepWithSignal } from '../../src/models/sleep-with-signal.js';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { createTestModel, respondCollecting, userRequest } from './model-test-kit.js';

const request: ModelRequest = userRequest;

describe('OpenAI Responses model: provider failures', () => {
  let provider: FakeResponsesProvider;
  beforeEach(async () => {
    provider = await startFakeResponsesProvider();
  });
  afterEach(async () => {
    await provider.close();
  });

  it('turns response.failed into a ModelError with the provider message, not retried', async () => {
    provider.enqueue({ end: 'failed', failure: { code: 'server_error', message: 'The model crashed while thinking.' } }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider);

    const error: unknown = await respondCollecting(model).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toContain('The model crashed while thinking.');
    expect((error as ModelError).message).toContain('server_error');
    expect(provider.requestCount).toBe(1);
  });

  it('turns response.failed after some text into a ModelError as well', async () => {
    provider.enqueue({ text: 'Partial answer', end: 'failed', failure: { message: 'Upstream gave up.' } });
    const { model } = createTestModel(provider);

    await expect(respondCollecting(model)).rejects.toThrow(/Upstream gave up\./);
  });

  it.each(['flat', 'nested'] as const)('turns an error event (%s shape) into a ModelError with its message', async (errorShape) => {
    provider.enqueue({ end: 'error', errorShape, failure: { code: 'context_length_exceeded', message: 'Your input exceeds the context window.' } }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider);

    await expect(respondCollecting(model)).rejects.toSatisfy(
      (error) => error instanceof ModelError && error.message.includes('Your input exceeds the context window.'),
    );
    expect(provider.requestCount).toBe(1);
  });

  it('does not follow a redirect: the request fails, saying so, and nothing is sent again', async () => {
    provider.enqueue({ status: 307, headers: { location: `${provider.baseUrl}/responses` } }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider);

    const error: unknown = await respondCollecting(model).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toMatch(/answered with a redirect, which is not followed/);
    expect(provider.requestCount).toBe(1);
  });

  it('refuses a function call item that has no name', async () => {
    provider.enqueue({ items: [{ id: 'fc_1', type: 'function_call', call_id: 'call_1', name: '', arguments: '{}', status: 'completed' }] });
    const { model } = createTestModel(provider);

    await expect(respondCollecting(model)).rejects.toThrow(/function_call item without a call_id or name/);
  });

  it('lets an error thrown by the delta listener through unchanged and closes the request', async () => {
    provider.enqueue({ text: ['one ', 'two ', 'three'], eventDelayMs: 5 });
    const { model } = createTestModel(provider);
    const listenerError = new Error('the caller broke');

    const failure = model.respond(request, {
      signal: new AbortController().signal,
      onTextDelta: () => {
        throw listenerError;
      },
    });

    await expect(failure).rejects.toBe(listenerError);
    expect((await provider.requests[0]!.ended).how).toBe('client-disconnected');
    expect(provider.requestCount).toBe(1);
  });
});

describe('OpenAI Responses model: abort', () => {
  let provider: FakeResponsesProvider;
  beforeEach(async () => {
    provider = await startFakeResponsesProvider();
  });
  afterEach(async () => {
    await provider.close();
  });

  it('closes the HTTP request on an abort mid-stream and rejects with the abort', async () => {
    // The provider never ends this answer: only the abort can close the request.
    provider.enqueue({ text: ['Streaming ', 'a ', 'long ', 'answer'], hang: true }, { text: 'must not be fetched' });
    const { model } = createTestModel(provider);
    const controller = new AbortController();
    const deltas: string[] = [];
    let allArrived: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (allArrived = resolve));

    const pending = model.respond(request, {
      signal: controller.signal,
      onTextDelta: (delta) => {
        deltas.push(delta);
        if (deltas.length === 4) allArrived();
      },
    });
    await arrived;
    const abortedAt = performance.now();
    controller.abort();

    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await expect(pending).rejects.not.toBeInstanceOf(ModelError);
    const end = await provider.requests[0]!.ended;
    expect(end.how).toBe('client-disconnected');
    // Closed by the abort, not before it (how soon depends on the machine's load, not on the code).
    expect(end.atMs).toBeGreaterThanOrEqual(abortedAt);
    expect(provider.disconnects).toHaveLength(1);
    expect(provider.requestCount).toBe(1);
  });

  it('rejects with the exact reason the turn aborted with', async () => {
    provider.enqueue({ text: 'waiting', hang: { afterEvents: 2 } });
    const { model } = createTestModel(provider);
    const controller = new AbortController();
    const reason = new Error('turn cancelled by the caller');

    const pending = model.respond(request, { signal: controller.signal, onTextDelta: () => undefined });
    await provider.waitForRequest(1);
    controller.abort(reason);

    await expect(pending).rejects.toBe(reason);
    await provider.waitForDisconnect(1);
  });

  it('aborts a request still waiting for its headers', async () => {
    provider.enqueue({ text: 'slow', headersDelayMs: 10_000 });
    const { model } = createTestModel(provider);
    const controller = new AbortController();

    const pending = model.respond(request, { signal: controller.signal, onTextDelta: () => undefined });
    await provider.waitForRequest(1);
    controller.abort();

    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect((await provider.requests[0]!.ended).how).toBe('client-disconnected');
  });

  it('stops waiting between retries when aborted', async () => {
    provider.enqueue({ status: 429, retryAfter: 30 }, { text: 'must not be fetched' });
    // The real sleep, so the abort has to cut a 30-second wait short.
    const { model } = createTestModel(provider, { sleep: sleepWithSignal });
    const controller = new AbortController();

    const pending = model.respond(request, { signal: controller.signal, onTextDelta: () => undefined });
    await (await provider.waitForRequest(1)).ended;
    controller.abort();

    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(provider.requestCount).toBe(1);
  });

  it('does not send anything when the signal is already aborted', async () => {
    const { model } = createTestModel(provider);

    await expect(respondCollecting(model, request, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    expect(provider.requestCount).toBe(0);
  });
});
