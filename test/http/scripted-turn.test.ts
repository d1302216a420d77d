import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, openStream } from '../support/sse-client.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

const writeThenRead = {
  agent: { id: 'acme-support', tools: { computer: true, todo: true } },
  input: 'Summarise notes.md into summary.md',
  model: {
    script: [
      { text: 'Writing the file.', calls: [{ name: 'write_file', arguments: { path: 'notes.md', content: 'hello world\n' } }] },
      // Truncated arguments: repaired by closing the object.
      { calls: [{ name: 'read_file', arguments: '{"path": "notes.md"', callId: 'read-1' }] },
      { text: 'Done: notes.md says hello world.' },
    ],
  },
};

describe('POST /turns with the scripted model', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('streams a whole turn as Server-Sent Events, numbered from 1, and stores it', async () => {
    const stream = await openStream({ url: `${runtime.baseUrl}/turns`, body: writeThenRead });
    await stream.ended;
    expect(stream.response.statusCode).toBe(200);
    expect(stream.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.response.headers['cache-control']).toBe('no-cache, no-transform');
    expect(stream.response.headers['x-accel-buffering']).toBe('no');
    const turnId = stream.response.headers['turn-id'];
    expect(turnId).toMatch(/^turn_[0-9a-f]{32}$/);

    const events = eventsOf(stream);
    expect(events.map((event) => event['seq'])).toEqual(events.map((_, index) => index + 1));
    expect(stream.messages.every((message) => message.id === String(JSON.parse(message.data).seq))).toBe(true);
    expect(stream.messages.every((message) => message.event === JSON.parse(message.data).type)).toBe(true);
    expect(events.every((event) => event['turnId'] === turnId && typeof event['at'] === 'string')).toBe(true);

    expect(events[0]).toMatchObject({ type: 'turn.started', agentId: 'acme-support', kind: 'text', model: 'scripted' });
    expect((events[0] as { tools: string[] }).tools.slice(0, 5)).toEqual(['todo', 'read_file', 'write_file', 'edit_file', 'list_files']);
    const types = events.map((event) => event['type']);
    expect(types.filter((type) => String(type).startsWith('turn.') && type !== 'turn.started')).toEqual(['turn.completed']);
    expect(types.at(-1)).toBe('turn.completed');

    expect(events.find((event) => event['type'] === 'tool.started' && event['name'] === 'write_file')).toMatchObject({
      label: 'Writing notes.md',
      executionMode: 'sequential',
      iteration: 1,
      repair: 'none',
    });
    expect(events.find((event) => event['type'] === 'tool.completed' && event['name'] === 'write_file')).toMatchObject({
      label: 'Wrote notes.md (12 B)',
    });
    const read = events.find((event) => event['type'] === 'tool.completed' && event['callId'] === 'read-1');
    expect(read).toMatchObject({ name: 'read_file', repair: 'closed_containers', details: { repair: 'closed_containers' } });
    expect(read?.['output']).toContain('hello world');
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed', output: 'Done: notes.md says hello world.', iterations: 3, outcome: 'final_answer' });

    const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${String(turnId)}`));
    expect(record).toMatchObject({ id: turnId, agentId: 'acme-support', status: 'completed', iterations: 3, output: 'Done: notes.md says hello world.', error: null });
    expect(record.finishedAt).toEqual(events.at(-1)?.['at']);

    const stored = await readJson(await fetch(`${runtime.baseUrl}/turns/${String(turnId)}/events`, { headers: { accept: 'application/json' } }));
    expect(stored.events).toEqual(events);
  });

  it('answers NDJSON, one event per line, when asked', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify(writeThenRead),
    });
    expect(response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const lines = (await response.text()).trim().split('\n');
    const events = lines.map((line) => JSON.parse(line) as { type: string; seq: number });
    expect(events[0]?.type).toBe('turn.started');
    expect(events.at(-1)?.type).toBe('turn.completed');
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
  });

  it('waits for the end and answers the record with its events for application/json', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(writeThenRead),
    });
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expect(response.headers.get('turn-id')).toBe(body.id);
    expect(body).toMatchObject({ status: 'completed', output: 'Done: notes.md says hello world.', kind: 'text' });
    expect(body.events.at(-1).type).toBe('turn.completed');
  });

  it('refuses an Accept it cannot serve with 406', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/html' },
      body: JSON.stringify(writeThenRead),
    });
    expect(response.status).toBe(406);
    expect((await readJson(response)).error.code).toBe('not_acceptable');
  });

  it('flushes each event when it happens, not at the end', async () => {
    // The model thinks for 30 s: turn.started arrives while the turn still runs, however loaded
    // the machine; the cancel then ends it.
    const stream = await openStream({
      url: `${runtime.baseUrl}/turns`,
      body: { agent: { id: 'slow' }, input: 'wait', model: { script: [{ text: 'thinking', delayMs: 30_000 }] } },
    });
    const started = await stream.waitFor((message) => message.event === 'turn.started');
    expect(started).toBeDefined();
    expect(stream.messages.map((message) => message.event)).toEqual(['turn.started']);
    expect((await fetch(`${runtime.baseUrl}/turns/${String(stream.response.headers['turn-id'])}/cancel`, { method: 'POST' })).status).toBe(202);
    await stream.ended;
    expect(stream.messages.at(-1)?.event).toBe('turn.cancelled');
  });

  it('shows what was assembled, with the provider tools exactly as sent', async () => {
    const stream = await openStream({ url: `${runtime.baseUrl}/turns`, body: writeThenRead });
    await stream.ended;
    const turnId = String(stream.response.headers['turn-id']);
    const response = await fetch(`${runtime.baseUrl}/turns/${turnId}/tools`);
    const text = await response.text();
    const body = JSON.parse(text);
    expect(body.turnId).toBe(turnId);
    expect(body.tools.map((tool: { name: string }) => tool.name)).toEqual(['todo', 'read_file', 'write_file', 'edit_file', 'list_files', 'apply_patch', 'run_command']);
    const readFile = body.tools.find((tool: { name: string }) => tool.name === 'read_file');
    expect(readFile).toMatchObject({ strict: false, namespace: null, deferLoading: false, executionMode: 'parallel', isReadOnly: true, isDestructive: false, schemaSource: 'zod' });
    expect(readFile.parameters.type).toBe('object');
    expect(readFile.parameters.$schema).toBeUndefined();
    expect(body.providerTools[1]).toEqual({ type: 'function', name: 'read_file', description: readFile.description, parameters: readFile.parameters, strict: false });
    expect(body.providerToolsByIteration).toEqual([{ iteration: 1, providerTools: body.providerTools }]);
    // Served from the stored text: the same bytes JSON.stringify produced for the request.
    expect(text).toContain(`"providerTools":${JSON.stringify(body.providerTools)}`);
  });

  it('shows a source the server cannot serve: web_search absent without a provider, and why', async () => {
    const response = await fetch(`${runtime.baseUrl}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ agent: { id: 'web-agent', tools: { web: true } }, input: 'x', model: { script: [] } }),
    });
    const turn = await readJson(response);
    expect(turn.events[0].tools).toEqual(['web_fetch']);
    const tools = await readJson(await fetch(`${runtime.baseUrl}/turns/${turn.id as string}/tools`));
    expect(tools.tools.map((tool: { name: string }) => tool.name)).toEqual(['web_fetch']);
    expect(tools.unavailableSources).toEqual([
      { source: 'web.web_search', reason: 'no web search provider is configured (WEB_SEARCH_PROVIDER)' },
    ]);
    expect(turn.events[0].unavailableSources).toEqual(tools.unavailableSources);
  });

  it('answers 404 turn_not_found for an unknown turn on every turn route', async () => {
    for (const [method, path] of [
      ['GET', '/turns/turn_missing'],
      ['GET', '/turns/turn_missing/tools'],
      ['GET', '/turns/turn_missing/events'],
      ['POST', '/turns/turn_missing/cancel'],
    ] as const) {
      const response = await fetch(`${runtime.baseUrl}${path}`, { method });
      expect(response.status, path).toBe(404);
      expect((await readJson(response)).error.code).toBe('turn_not_found');
    }
  });
});
