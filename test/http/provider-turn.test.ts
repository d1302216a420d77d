import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { waitUntil } from '../support/wait-until.js';

async function runTurn(runtime: TestRuntime, body: Record<string, unknown>): Promise<any> {
  const response = await fetch(`${runtime.baseUrl}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ agent: { id: 'provider-agent', tools: { computer: true } }, model: { name: 'gpt-5.1' }, ...body }),
  });
  return readJson(response);
}

describe('turns against an OpenAI Responses provider (real HTTP, SSE)', () => {
  let provider: FakeResponsesProvider;
  let runtime: TestRuntime;
  beforeAll(async () => {
    provider = await startFakeResponsesProvider();
    runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test-secret', MODEL_MAX_RETRIES: '1' } });
  });
  afterEach(() => {
    provider.setDefault(undefined);
  });
  afterAll(async () => {
    await runtime.close();
    await provider.close();
  });

  it('sends the whole conversation each time, store false, and the tools byte for byte as GET /tools shows them', async () => {
    const before = provider.requests.length;
    provider.enqueue(
      { text: 'Let me write it.', calls: [{ name: 'write_file', callId: 'call_w', arguments: ['{"path":"a.txt",', '"content":"A"}'] }], usage: { inputTokens: 100, outputTokens: 20 } },
      { text: 'Written.', usage: { inputTokens: 150, outputTokens: 5 } },
    );
    const body = await runTurn(runtime, { input: 'write a.txt', agent: { id: 'provider-agent', instructions: 'Be brief.', tools: { computer: true } } });
    expect(body).toMatchObject({ status: 'completed', output: 'Written.', model: 'gpt-5.1', iterations: 2, usage: { inputTokens: 250, outputTokens: 25 } });

    const [first, second] = provider.requests.slice(before);
    expect(first!.body).toMatchObject({ model: 'gpt-5.1', store: false, stream: true, instructions: 'Be brief.', tool_choice: 'auto' });
    expect(first!.body.input).toEqual([{ type: 'message', role: 'user', content: 'write a.txt' }]);
    expect(second!.body.input).toEqual([
      { type: 'message', role: 'user', content: 'write a.txt' },
      expect.objectContaining({ type: 'message', role: 'assistant' }),
      { type: 'function_call', call_id: 'call_w', name: 'write_file', arguments: '{"path":"a.txt","content":"A"}' },
      { type: 'function_call_output', call_id: 'call_w', output: expect.stringContaining('Created a.txt') },
    ]);

    const toolsText = await (await fetch(`${runtime.baseUrl}/turns/${body.id as string}/tools`)).text();
    const providerTools = JSON.stringify(JSON.parse(toolsText).providerTools);
    expect(first!.rawBody).toContain(`"tools":${providerTools}`);
    expect(second!.rawBody).toContain(`"tools":${providerTools}`);
  });

  it('asks once for a summary, with tool_choice none, when the iteration budget runs out', async () => {
    const before = provider.requests.length;
    provider.setDefault({ calls: [{ name: 'list_files', arguments: '{}' }] });
    provider.enqueue(
      { calls: [{ name: 'list_files', arguments: '{}' }] },
      { calls: [{ name: 'list_files', arguments: '{}' }] },
      { text: 'I listed the files twice and ran out of steps.' },
    );
    const body = await runTurn(runtime, { input: 'keep going', limits: { maxIterations: 2 } });
    expect(body).toMatchObject({
      status: 'failed',
      outcome: 'iteration_exhausted',
      error: { code: 'max_iterations' },
      output: 'I listed the files twice and ran out of steps.',
      iterations: 3,
    });
    const requests = provider.requests.slice(before);
    expect(requests).toHaveLength(3);
    expect(requests[2]!.body.tool_choice).toBe('none');
    expect((requests[2]!.body.input as { content?: unknown }[]).at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('summarise') });
  });

  it('nudges once when the model answers nothing after tool results', async () => {
    const before = provider.requests.length;
    provider.enqueue({ calls: [{ name: 'list_files', arguments: '' }] }, { text: '' }, { text: 'Here are the files.' });
    const body = await runTurn(runtime, { input: 'list' });
    expect(body).toMatchObject({ status: 'completed', output: 'Here are the files.', iterations: 3 });
    const third = provider.requests.slice(before)[2]!;
    expect((third.body.input as { content?: unknown }[]).at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('empty') });
    const listed = body.events.find((event: { type: string }) => event.type === 'tool.completed');
    expect(listed).toMatchObject({ name: 'list_files', repair: 'empty_object' });
  });

  it('sends no tool settings on a turn without tools', async () => {
    const before = provider.requests.length;
    provider.enqueue({ text: 'Hello.' });
    const body = await runTurn(runtime, { agent: { id: 'bare' }, input: 'hi' });
    expect(body.status).toBe('completed');
    const sent = provider.requests[before]!.body;
    expect(sent.tools).toEqual([]);
    expect(sent).not.toHaveProperty('tool_choice');
    expect(sent).not.toHaveProperty('parallel_tool_calls');
  });

  it('records a provider error as turn.failed model_error, without the API key', async () => {
    provider.enqueue({ status: 400, error: { message: 'Invalid schema for function: sk-test-secret is wrong', type: 'invalid_request_error' } });
    const body = await runTurn(runtime, { input: 'hi' });
    expect(body).toMatchObject({ status: 'failed', error: { code: 'model_error' } });
    expect(JSON.stringify(body)).not.toContain('sk-test-secret');
  });

  it('fails the turn when the provider redirects, without following the POST anywhere', async () => {
    const before = provider.requests.length;
    provider.enqueue({ status: 307, headers: { location: `${provider.baseUrl}/responses` } });
    const body = await runTurn(runtime, { input: 'hi' });
    expect(body).toMatchObject({ status: 'failed', error: { code: 'model_error' } });
    expect(JSON.stringify(body.error)).toMatch(/answered with a redirect, which is not followed/);
    // Not retried (MODEL_MAX_RETRIES is 1 here), and the redirect's target was never asked.
    expect(provider.requests.length - before).toBe(1);
  });

  it('aborts the provider request when the client disconnects mid-stream', async () => {
    const disconnectsBefore = provider.disconnects.length;
    // The provider never ends this answer: only the client's departure can close its request.
    provider.enqueue({ text: ['Thinking', ' very', ' slowly'], hang: true });
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { agent: { id: 'provider-agent' }, input: 'hang', model: { name: 'gpt-5.1' } },
    });
    await stream.waitFor((message) => message.event === 'message.delta');
    const turnId = String(stream.response.headers['turn-id']);
    stream.destroy();
    const gone = await provider.waitForDisconnect(disconnectsBefore + 1);
    expect((await gone.ended).how).toBe('client-disconnected');
    const record = await waitUntil('the turn to end', async () => {
      const current = (await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`))) as Record<string, unknown>;
      return current['status'] === 'running' ? undefined : current;
    });
    expect(record).toMatchObject({ status: 'cancelled', error: { reason: 'client_disconnected' } });
  });

  it('takes a client that half-closes its connection mid-stream for gone: the provider request is aborted and the turn cancelled', async () => {
    const disconnectsBefore = provider.disconnects.length;
    provider.enqueue({ text: ['Thinking', ' very', ' slowly'], hang: true });
    const body = JSON.stringify({ agent: { id: 'provider-agent' }, input: 'hang, then half-close', model: { name: 'gpt-5.1' } });
    const { port } = new URL(runtime.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `POST /turns HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: text/event-stream\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    await waitUntil('the first message.delta', () => (received.includes('event: message.delta') ? true : undefined));
    const turnId = /turn-id: (\S+)/i.exec(received)?.[1] ?? '';
    expect(turnId).not.toBe('');
    // Our side only: the socket stays open for reading, as a client that sent all it meant to would leave it.
    socket.end();
    const gone = await provider.waitForDisconnect(disconnectsBefore + 1);
    expect((await gone.ended).how).toBe('client-disconnected');
    const record = await waitUntil('the turn to end', async () => {
      const current = (await readJson(await fetch(`${runtime.baseUrl}/turns/${turnId}`))) as Record<string, unknown>;
      return current['status'] === 'running' ? undefined : current;
    });
    socket.destroy();
    expect(record).toMatchObject({ status: 'cancelled', error: { reason: 'client_disconnected' } });
  });
});
