import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { openStream } from '../support/sse-client.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { runJsonTurn } from '../support/turn-waits.js';

const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INCOMING_PARENT = '00f067aa0ba902b7';
const SPAN_ID = /^[0-9a-f]{16}$/;

/** Milliseconds since the epoch of an OpenTelemetry high-resolution time. */
const ms = (time: readonly [number, number]): number => time[0] * 1000 + time[1] / 1e6;
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

function turnTree(exporter: InMemorySpanExporter, turnId: string): { turn: ReadableSpan; children: ReadableSpan[]; all: ReadableSpan[] } {
  const spans = exporter.getFinishedSpans();
  const turn = spans.find((span) => span.attributes['turn_runtime.turn.id'] === turnId);
  if (turn === undefined) throw new Error(`no invoke_agent span for ${turnId}`);
  const inTrace = spans.filter((span) => span.spanContext().traceId === turn.spanContext().traceId);
  const children = inTrace.filter((span) => parentOf(span) === turn.spanContext().spanId).sort((a, b) => ms(a.startTime) - ms(b.startTime));
  return { turn, children, all: inTrace };
}

describe('OpenTelemetry GenAI traces', () => {
  const exporter = new InMemorySpanExporter();
  let provider: FakeResponsesProvider;
  let runtime: TestRuntime;
  beforeAll(async () => {
    provider = await startFakeResponsesProvider();
    runtime = await startTestRuntime({
      env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test-secret', MODEL_MAX_RETRIES: '2' },
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
  });
  beforeEach(() => {
    exporter.reset();
  });
  afterAll(async () => {
    await runtime.close();
    await provider.close();
  });

  it('gives a turn with parallel calls and a failed tool one invoke_agent span, under the incoming traceparent, with chat and execute_tool children', async () => {
    const turn = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', traceparent: `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01` },
      body: JSON.stringify({
        agent: { id: 'trace-agent', tools: { computer: true } },
        input: 'secret question',
        model: {
          script: [
            { calls: [{ name: 'write_file', callId: 'write-a', arguments: { path: 'a.txt', content: 'a' } }] },
            {
              calls: [
                { name: 'read_file', callId: 'read-a', arguments: { path: 'a.txt' } },
                { name: 'read_file', callId: 'read-missing', arguments: { path: 'missing.txt' } },
                { name: 'list_files', callId: 'list', arguments: {} },
              ],
            },
            { text: 'done' },
          ],
        },
      }),
    });
    const body = (await turn.json()) as { id: string; status: string };
    expect(body.status).toBe('completed');
    const { turn: root, children, all } = turnTree(exporter, body.id);

    expect(root.name).toBe('invoke_agent trace-agent');
    expect(root.spanContext().traceId).toBe(INCOMING_TRACE);
    expect(parentOf(root)).toBe(INCOMING_PARENT);
    expect(root.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'turn_runtime.scripted',
      'gen_ai.agent.id': 'trace-agent',
      'gen_ai.agent.name': 'trace-agent',
      'gen_ai.request.model': 'scripted',
      'gen_ai.usage.input_tokens': 0,
      'gen_ai.usage.output_tokens': 0,
      'turn_runtime.turn.id': body.id,
      'turn_runtime.turn.kind': 'text',
      'turn_runtime.turn.iterations': 3,
      'turn_runtime.turn.outcome': 'final_answer',
    });
    expect(root.status.code).toBe(0);
    // Every span of the trace is the turn or a direct child of it: no tool span hangs under a chat span.
    expect(all).toHaveLength(1 + 3 + 4);
    expect(children.map((span) => span.name).sort()).toEqual(
      ['chat scripted', 'chat scripted', 'chat scripted', 'execute_tool list_files', 'execute_tool read_file', 'execute_tool read_file', 'execute_tool write_file'].sort(),
    );
    const chats = children.filter((span) => span.name === 'chat scripted');
    expect(chats.map((span) => span.attributes['turn_runtime.iteration'])).toEqual([1, 2, 3]);
    expect(chats[0]?.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'turn_runtime.scripted',
      'gen_ai.request.model': 'scripted',
      'gen_ai.response.model': 'scripted',
      'gen_ai.output.type': 'text',
      'gen_ai.response.finish_reasons': ['tool_call'],
      'gen_ai.usage.input_tokens': 0,
      'gen_ai.usage.output_tokens': 0,
      'turn_runtime.iteration': 1,
    });
    expect(chats[2]?.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);

    const tool = (callId: string) => {
      const span = children.find((candidate) => candidate.attributes['gen_ai.tool.call.id'] === callId);
      if (span === undefined) throw new Error(`no span for ${callId}`);
      return span;
    };
    expect(tool('read-missing').attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'read_file',
      'gen_ai.tool.call.id': 'read-missing',
      'gen_ai.tool.type': 'function',
      'turn_runtime.iteration': 2,
      'turn_runtime.tool.label': 'Reading missing.txt',
      'turn_runtime.tool.repair': 'none',
      'error.type': 'tool_error',
    });
    expect(tool('read-missing').status).toMatchObject({ code: 2, message: expect.stringContaining('missing.txt') });
    expect(tool('read-a').status.code).toBe(0);
    expect(tool('write-a').attributes['turn_runtime.iteration']).toBe(1);
    // The parallel calls of iteration 2 are siblings whose times overlap, all after the second model call ended.
    const parallel = ['read-a', 'read-missing', 'list'].map(tool);
    for (const a of parallel) {
      for (const b of parallel) expect(ms(a.startTime)).toBeLessThanOrEqual(ms(b.endTime));
      expect(ms(a.startTime)).toBeGreaterThanOrEqual(ms(chats[1]?.endTime ?? [0, 0]));
      expect(ms(a.endTime)).toBeLessThanOrEqual(ms(chats[2]?.startTime ?? [0, 0]));
    }
    // No content unless asked for.
    expect(all.some((span) => Object.keys(span.attributes).some((key) => key.includes('messages') || key.includes('arguments') || key.includes('result')))).toBe(false);
  });

  it('traces a model retry as two attempts of one chat span, and passes the trace on to the provider in traceparent', async () => {
    const before = provider.requests.length;
    provider.enqueue({ status: 500, error: { message: 'upstream hiccup' }, retryAfterMs: 0 }, { text: 'hello', usage: { inputTokens: 12, outputTokens: 3 } });
    const turn = await runJsonTurn(runtime, { agent: { id: 'retry-agent' }, input: 'hi', model: { name: 'gpt-5.1' } });
    expect(turn.json.status).toBe('completed');
    const { turn: root, children } = turnTree(exporter, turn.json.id);
    expect(parentOf(root)).toBeUndefined();
    expect(root.attributes['gen_ai.provider.name']).toBe('openai');
    expect(root.attributes['gen_ai.usage.input_tokens']).toBe(12);
    expect(children).toHaveLength(1);
    const [chat] = children;
    expect(chat?.name).toBe('chat gpt-5.1');
    expect(chat?.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-5.1', 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 3 });
    expect(chat?.events.map((event) => [event.name, event.attributes])).toEqual([
      ['turn_runtime.model.attempt', { 'http.request.resend_count': 0, 'http.response.status_code': 500 }],
      ['turn_runtime.model.attempt', { 'http.request.resend_count': 1, 'http.response.status_code': 200 }],
    ]);
    const sent = provider.requests.slice(before).map((request) => request.headers['traceparent']);
    expect(sent).toEqual([`00-${root.spanContext().traceId}-${chat?.spanContext().spanId ?? ''}-01`, `00-${root.spanContext().traceId}-${chat?.spanContext().spanId ?? ''}-01`]);
    expect(chat?.spanContext().spanId).toMatch(SPAN_ID);
  });

  it('ends a cancelled turn and its model call with error.type cancelled', async () => {
    const stream = await openStream({ url: `${runtime.baseUrl}/turns`, body: { agent: { id: 'cancel-trace' }, input: 'think', model: { script: [{ text: 'late', delayMs: 30_000 }] } } });
    const turnId = String(stream.response.headers['turn-id']);
    await stream.waitFor((message) => message.event === 'turn.started');
    expect((await fetch(`${runtime.baseUrl}/turns/${turnId}/cancel`, { method: 'POST' })).status).toBe(202);
    await stream.ended;
    const { turn: root, children } = turnTree(exporter, turnId);
    expect(root.attributes).toMatchObject({ 'error.type': 'cancelled', 'turn_runtime.turn.cancel_reason': 'cancel_requested', 'turn_runtime.turn.iterations': 1 });
    expect(root.status).toEqual({ code: 2, message: 'cancelled: cancel_requested' });
    expect(children.map((span) => [span.name, span.attributes['error.type'], span.status.code])).toEqual([['chat scripted', 'cancelled', 2]]);
  });

  it('refuses a malformed traceparent quietly: the turn starts a trace of its own', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', traceparent: '00-not-a-trace-01' },
      body: JSON.stringify({ agent: { id: 'bad-parent' }, input: 'x', model: { script: [{ text: 'ok' }] } }),
    });
    const body = (await response.json()) as { id: string };
    const { turn: root } = turnTree(exporter, body.id);
    expect(parentOf(root)).toBeUndefined();
    expect(root.spanContext().traceId).not.toBe(INCOMING_TRACE);
  });
});

describe('OpenTelemetry content capture', () => {
  it('puts messages, arguments and results on spans only with OTEL_GENAI_CAPTURE_CONTENT=true', async () => {
    const exporter = new InMemorySpanExporter();
    const runtime = await startTestRuntime({ env: { OTEL_GENAI_CAPTURE_CONTENT: 'true' }, spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    try {
      const turn = await runJsonTurn(runtime, {
        agent: { id: 'capture', instructions: 'Be brief.', tools: { todo: true } },
        input: 'remember milk',
        model: { script: [{ calls: [{ name: 'todo', callId: 'todo-1', arguments: { todos: [{ content: 'milk', status: 'pending' }] } }] }, { text: 'noted' }] },
      });
      const { children } = turnTree(exporter, turn.json.id);
      const [firstChat] = children.filter((span) => span.name === 'chat scripted');
      expect(JSON.parse(String(firstChat?.attributes['gen_ai.input.messages']))).toEqual([{ type: 'message', role: 'user', content: 'remember milk' }]);
      expect(JSON.parse(String(firstChat?.attributes['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: 'Be brief.' }]);
      expect(JSON.parse(String(firstChat?.attributes['gen_ai.output.messages']))).toEqual([
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'todo-1', name: 'todo', arguments: '{"todos":[{"content":"milk","status":"pending"}]}' }], finish_reason: 'tool_call' },
      ]);
      const todo = children.find((span) => span.name === 'execute_tool todo');
      expect(todo?.attributes['gen_ai.tool.call.arguments']).toBe('{"todos":[{"content":"milk","status":"pending"}]}');
      expect(typeof todo?.attributes['gen_ai.tool.call.result']).toBe('string');
    } finally {
      await runtime.close();
    }
  });
});

describe('OpenTelemetry export by the standard OTEL_* variables', () => {
  it('is off with none set: no tracer, and no traceparent reaches the provider', async () => {
    const provider = await startFakeResponsesProvider();
    const runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test-secret' } });
    try {
      expect(runtime.observability.tracing).toBeUndefined();
      provider.enqueue({ text: 'hi' });
      await runJsonTurn(runtime, { agent: { id: 'untraced' }, input: 'hi', model: {} });
      expect(provider.requests.at(-1)?.headers['traceparent']).toBeUndefined();
    } finally {
      await runtime.close();
      await provider.close();
    }
  });

  it('sends spans as OTLP/HTTP JSON to OTEL_EXPORTER_OTLP_ENDPOINT, with OTEL_EXPORTER_OTLP_HEADERS', async () => {
    interface OtlpBody {
      resourceSpans: { resource: { attributes: unknown[] }; scopeSpans: { spans: { name: string }[] }[] }[];
    }
    const received: { url: string; headers: IncomingMessage['headers']; body: OtlpBody }[] = [];
    const collector = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      request.on('end', () => {
        received.push({ url: request.url ?? '', headers: request.headers, body: JSON.parse(text) as OtlpBody });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    const runtime = await startTestRuntime({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=abc123', OTEL_SERVICE_NAME: 'turns-under-test' },
    });
    try {
      await runJsonTurn(runtime, { agent: { id: 'exported' }, input: 'x', model: { script: [{ text: 'ok' }] } });
    } finally {
      await runtime.close();
      await new Promise((resolve) => collector.close(resolve));
    }
    expect(received.length).toBeGreaterThan(0);
    expect(received[0]?.url).toBe('/v1/traces');
    expect(received[0]?.headers['x-collector-key']).toBe('abc123');
    const resourceSpans = received.flatMap((request) => request.body.resourceSpans);
    const names = resourceSpans.flatMap((entry) => entry.scopeSpans.flatMap((scope) => scope.spans.map((span) => span.name)));
    expect(names.sort()).toEqual(['chat scripted', 'invoke_agent exported']);
    expect(resourceSpans[0]?.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'turns-under-test' } });
  });
});
