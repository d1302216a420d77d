import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponsesProvider, type FakeResponsesProvider } from '../support/fake-responses-provider.js';
import { readJson, startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

const resultSchema = {
  type: 'object',
  properties: {
    releaseDate: { type: 'string', format: 'date' },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    source: { type: 'string' },
  },
  required: ['releaseDate', 'confidence'],
};

function task(script: unknown[], extra: Record<string, unknown> = {}) {
  return {
    agent: { id: 'researcher', tools: { computer: true, todo: true, web: true, brain: true, skills: [] } },
    kind: 'workflow_task',
    input: 'Find the release date of Node 24.',
    task: { instructions: 'Find the release date of Node 24.', resultSchema },
    model: { script },
    ...extra,
  };
}

async function runTurn(runtime: TestRuntime, body: unknown): Promise<any> {
  const response = await fetch(`${runtime.baseUrl}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await readJson(response) };
}

describe('workflow task turns', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('gets a fixed catalog: web tools, the read-only Brain tools and submit_result, submit_result strict and sequential', async () => {
    const { body } = await runTurn(runtime, task([{ calls: [{ name: 'submit_result', arguments: { result: { releaseDate: '2025-05-06', confidence: 0.9, source: null } } }] }]));
    const tools = await readJson(await fetch(`${runtime.baseUrl}/turns/${body.id as string}/tools`));
    expect(tools.kind).toBe('workflow_task');
    expect(tools.tools.map((tool: { name: string }) => tool.name)).toEqual(['web_fetch', 'recall', 'get_page', 'submit_result']);
    const submit = tools.tools.find((tool: { name: string }) => tool.name === 'submit_result');
    expect(submit).toMatchObject({ strict: true, executionMode: 'sequential', schemaSource: 'json' });
    expect(submit.parameters).toMatchObject({ type: 'object', required: ['result'], additionalProperties: false });
    expect(submit.parameters.properties.result.required).toEqual(['releaseDate', 'confidence', 'source']);
    expect(submit.parameters.properties.result.properties.source.type).toEqual(['string', 'null']);
    expect(tools.providerTools.find((tool: { name: string }) => tool.name === 'submit_result').strict).toBe(true);
    expect(body.events[0].unavailableSources).not.toContainEqual(expect.objectContaining({ source: 'brain' }));
  });

  it('completes with the accepted result, stored and re-validated, nulls for absent optionals removed', async () => {
    const { body } = await runTurn(runtime, task([
      { text: 'Found it.', calls: [{ name: 'submit_result', arguments: { result: { releaseDate: '2025-05-06', confidence: 0.9, source: null } } }] },
      { text: 'never asked' },
    ]));
    expect(body).toMatchObject({ status: 'completed', outcome: 'result_submitted', result: { releaseDate: '2025-05-06', confidence: 0.9 } });
    expect(body.result).not.toHaveProperty('source');
    expect(body.events.at(-1)).toMatchObject({ type: 'turn.completed', result: { releaseDate: '2025-05-06', confidence: 0.9 }, outcome: 'result_submitted' });
    expect(body.iterations).toBe(1);
    const record = await readJson(await fetch(`${runtime.baseUrl}/turns/${body.id as string}`));
    expect(record.result).toEqual({ releaseDate: '2025-05-06', confidence: 0.9 });
  });

  it('answers a submission that fails the schema with its problems and keeps the turn alive', async () => {
    const { body } = await runTurn(runtime, task([
      { calls: [{ name: 'submit_result', arguments: { result: { releaseDate: 'soon', confidence: 3, source: null } } }] },
      { calls: [{ name: 'submit_result', arguments: { result: { releaseDate: '2025-05-06', confidence: 1, source: 'nodejs.org' } } }] },
    ]));
    const failed = body.events.find((event: { type: string }) => event.type === 'tool.failed');
    expect(failed).toMatchObject({ name: 'submit_result', error: { code: 'tool_error' } });
    expect(failed.output).toContain('result.releaseDate');
    expect(failed.output).toContain('result.confidence');
    expect(body).toMatchObject({ status: 'completed', result: { releaseDate: '2025-05-06', confidence: 1, source: 'nodejs.org' }, iterations: 2 });
  });

  it('refuses a result over 24 KiB to the model like a schema failure, and accepts a shorter one', async () => {
    const { body } = await runTurn(runtime, task([
      { calls: [{ name: 'submit_result', arguments: { result: { releaseDate: '2025-05-06', confidence: 1, source: 'x'.repeat(25 * 1024) } } }] },
      { calls: [{ name: 'submit_result', arguments: { result: { releaseDate: '2025-05-06', confidence: 1, source: 'nodejs.org' } } }] },
    ]));
    const failed = body.events.find((event: { type: string }) => event.type === 'tool.failed');
    expect(failed).toMatchObject({ name: 'submit_result', error: { code: 'tool_error' } });
    expect(failed.output).toContain('at most 24576 bytes');
    expect(body).toMatchObject({ status: 'completed', result: { source: 'nodejs.org' }, iterations: 2 });
  });

  it('reminds once after prose without a submission, then accepts a submission', async () => {
    const { body } = await runTurn(runtime, task([
      { text: 'The release date is 2025-05-06.' },
      { calls: [{ name: 'submit_result', arguments: { result: { releaseDate: '2025-05-06', confidence: 0.8, source: null } } }] },
    ]));
    expect(body).toMatchObject({ status: 'completed', iterations: 2, outcome: 'result_submitted' });
  });

  it('fails with no_result_submitted (empty_output) when the model still does not submit', async () => {
    const { body } = await runTurn(runtime, task([{ text: 'It is 2025-05-06.' }, { text: 'As I said, 2025-05-06.' }]));
    expect(body).toMatchObject({ status: 'failed', error: { code: 'no_result_submitted', reason: 'empty_output' } });
    expect(body.events.at(-1)).toMatchObject({ type: 'turn.failed', error: { code: 'no_result_submitted' } });
  });

  it('fails with no_result_submitted (schema_noncompliance) when every submission was refused', async () => {
    const { body } = await runTurn(runtime, task([
      { calls: [{ name: 'submit_result', arguments: { result: { releaseDate: 'soon', confidence: 0.5, source: null } } }] },
      { text: 'I cannot do better.' },
      { text: 'Really.' },
    ]));
    expect(body).toMatchObject({ status: 'failed', error: { code: 'no_result_submitted', reason: 'schema_noncompliance' } });
  });

  it('refuses a result schema strict mode cannot take, naming the path, before any turn exists', async () => {
    const { status, body } = await runTurn(runtime, {
      ...task([]),
      task: { instructions: 'x', resultSchema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, uniqueItems: true } } } },
    });
    expect(status).toBe(400);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.issues[0].path).toEqual(['task', 'resultSchema', 'tags']);
    expect(body.error.message).toContain('uniqueItems');
  });

  it('refuses a result schema with an open record', async () => {
    const { status, body } = await runTurn(runtime, {
      ...task([]),
      task: { instructions: 'x', resultSchema: { type: 'object', additionalProperties: { type: 'string' } } },
    });
    expect(status).toBe(400);
    expect(body.error.message).toContain('closed object');
  });
});

describe('workflow task turns against a Responses provider', () => {
  let provider: FakeResponsesProvider;
  let runtime: TestRuntime;
  beforeAll(async () => {
    provider = await startFakeResponsesProvider();
    runtime = await startTestRuntime({ env: { OPENAI_BASE_URL: provider.baseUrl, OPENAI_API_KEY: 'sk-test-key', MODEL_MAX_RETRIES: '0' } });
  });
  afterAll(async () => {
    await runtime.close();
    await provider.close();
  });

  it('sends the single reminder to call submit_result after prose', async () => {
    provider.enqueue(
      { text: 'The answer is 2025-05-06.' },
      { calls: [{ name: 'submit_result', arguments: JSON.stringify({ result: { releaseDate: '2025-05-06', confidence: 0.7, source: null } }) }] },
    );
    const { body } = await runTurn(runtime, { ...task([]), model: { name: 'gpt-5.1' } });
    expect(body).toMatchObject({ status: 'completed', result: { releaseDate: '2025-05-06', confidence: 0.7 } });
    const second = provider.requests.at(-1)!.body as { input: { role?: string; content?: unknown }[]; instructions: string; tools: { name: string; strict: boolean }[] };
    expect(second.input.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('submit_result') });
    expect(second.instructions).toContain('Find the release date of Node 24.');
    expect(second.tools.map((tool) => tool.name)).toEqual(['web_fetch', 'recall', 'get_page', 'submit_result']);
  });
});
