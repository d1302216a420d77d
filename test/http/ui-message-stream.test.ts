import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';
import { waitForTurnStatus } from '../support/turn-waits.js';

/** Reads a turn the way `useChat` does: its own transport (chunk validation included) and its own reader. */
async function readTurnAsUseChat(runtime: TestRuntime, turnRequest: object, abortSignal?: AbortSignal): Promise<{ last: UIMessage | undefined; errors: string[] }> {
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${runtime.baseUrl}/turns?protocol=ui-message`,
    prepareSendMessagesRequest: () => ({ body: turnRequest }),
  });
  const stream = await transport.sendMessages({
    chatId: 'chat-1',
    messages: [],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal,
  });
  const errors: string[] = [];
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({ stream, onError: (error) => errors.push(error instanceof Error ? error.message : String(error)) })) {
    last = message;
  }
  return { last, errors };
}

describe('POST /turns?protocol=ui-message (AI SDK UI message stream v1)', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('assembles into one assistant message: text, tool parts with inputs and outputs, activity data parts, finish', async () => {
    const { last, errors } = await readTurnAsUseChat(runtime, {
      agent: { id: 'ui-agent', tools: { computer: true } },
      input: 'write and read',
      model: {
        script: [
          { text: 'Writing it.', calls: [{ name: 'write_file', callId: 'w1', arguments: { path: 'a.txt', content: 'hello' } }] },
          {
            calls: [
              { name: 'read_file', callId: 'r1', arguments: { path: 'a.txt' } },
              { name: 'read_file', callId: 'r2', arguments: { path: 'missing.txt' } },
              { name: 'made_up_tool', callId: 'x1', arguments: {} },
            ],
          },
          { text: 'a.txt says hello.' },
        ],
      },
    });
    expect(errors).toEqual([]);
    expect(last?.role).toBe('assistant');
    expect(last?.id).toMatch(/^turn_/);
    const parts = last?.parts ?? [];
    expect(parts.filter((part) => part.type === 'step-start')).toHaveLength(3);
    expect(parts.filter((part) => part.type === 'text').map((part) => ('text' in part ? [part.text, part.state] : []))).toEqual([
      ['Writing it.', 'done'],
      ['a.txt says hello.', 'done'],
    ]);
    const tool = (callId: string) => parts.find((part) => 'toolCallId' in part && part.toolCallId === callId) as Record<string, unknown> | undefined;
    expect(tool('w1')).toMatchObject({ type: 'tool-write_file', state: 'output-available', input: { path: 'a.txt', content: 'hello' }, output: expect.stringContaining('a.txt') });
    expect(tool('r1')).toMatchObject({ type: 'tool-read_file', state: 'output-available', input: { path: 'a.txt' }, output: expect.stringContaining('hello') });
    expect(tool('r2')).toMatchObject({ type: 'tool-read_file', state: 'output-error', input: { path: 'missing.txt' }, errorText: expect.stringContaining('Error:') });
    expect(tool('x1')).toMatchObject({ type: 'tool-made_up_tool', state: 'output-error', errorText: expect.stringContaining('made_up_tool') });
    // One activity part per call, updated in place to its final label.
    const activities = parts.filter((part) => part.type === 'data-activity') as unknown as { id: string; data: Record<string, unknown> }[];
    expect(activities.map((part) => part.id)).toEqual(['w1', 'r1', 'r2', 'x1']);
    expect(activities[0]?.data).toMatchObject({ callId: 'w1', name: 'write_file', label: 'Wrote a.txt (5 B)', status: 'completed' });
    expect(activities[2]?.data).toMatchObject({ callId: 'r2', status: 'failed', error: 'tool_error' });
    expect(last?.metadata).toMatchObject({ outcome: 'final_answer', iterations: 3, usage: { inputTokens: 0, outputTokens: 0 } });
  });

  it('sends the v1 header, the turn-id, SSE data lines and [DONE] at the end', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns?protocol=ui-message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ agent: { id: 'ui-agent' }, input: 'hi', model: { script: [{ text: 'hello there' }] } }),
    });
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const turnId = response.headers.get('turn-id');
    expect(turnId).toMatch(/^turn_/);
    const frames = (await response.text()).split('\n\n').filter((frame) => frame !== '');
    expect(frames.every((frame) => frame.startsWith('data: '))).toBe(true);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const types = frames.slice(0, -1).map((frame) => (JSON.parse(frame.slice('data: '.length)) as { type: string }).type);
    expect(types).toEqual(['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
    const record = await waitForTurnStatus(runtime, String(turnId), 'completed');
    expect(record['output']).toBe('hello there');
  });

  it('ends a failed turn with an error chunk the reader reports', async () => {
    const { last, errors } = await readTurnAsUseChat(runtime, {
      agent: { id: 'ui-task' },
      kind: 'workflow_task',
      task: { instructions: 'give a number', resultSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false } },
      input: 'go',
      model: { script: [{ text: 'no' }, { text: 'still no' }] },
    });
    expect(errors).toHaveLength(1);
    expect(last?.metadata).toMatchObject({ error: { code: 'no_result_submitted' } });
  });

  it('aborts the turn when the useChat client goes away', async () => {
    const controller = new AbortController();
    const reading = readTurnAsUseChat(runtime, { agent: { id: 'ui-leaver' }, input: 'x', model: { script: [{ text: 'thinking…', delayMs: 30_000 }] } }, controller.signal);
    while (runtime.service.runningCount === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    const { last, errors } = await reading;
    expect(errors).toEqual(['This operation was aborted']);
    const record = await waitForTurnStatus(runtime, String(last?.id), 'cancelled');
    expect(record['error']).toMatchObject({ reason: 'client_disconnected' });
  });

  it('refuses protocol=ui-message with an Accept that is not SSE, and an unknown protocol', async () => {
    const post = (query: string, accept: string) =>
      fetch(`${runtime.baseUrl}/turns${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ agent: { id: 'ui-agent' }, input: 'hi', model: { script: [{ text: 'x' }] } }),
      });
    const ndjson = await post('?protocol=ui-message', 'application/x-ndjson');
    expect(ndjson.status).toBe(406);
    expect(await ndjson.json()).toMatchObject({ error: { code: 'not_acceptable' } });
    const unknown = await post('?protocol=vercel', 'text/event-stream');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: { code: 'invalid_request' } });
  });
});
