import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, type TestRuntime } from '../support/test-runtime.js';
import { BRAIN_RUNTIMES } from './brain-runtimes.js';

interface Event {
  readonly type: string;
  readonly [field: string]: any;
}

async function runTurn(runtime: TestRuntime, body: unknown): Promise<{ body: any; events: Event[] }> {
  const response = await fetch(`${runtime.baseUrl}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await readJson(response);
  expect(response.status, JSON.stringify(answer)).toBe(200);
  return { body: answer, events: answer.events as Event[] };
}

const byCall = (events: Event[], type: string, callId: string) => events.find((event) => event.type === type && event['callId'] === callId);

const resultSchema = { type: 'object', properties: { price: { type: 'string' } }, required: ['price'] };

function task(agentId: string, script: unknown[]) {
  return {
    agent: { id: agentId, tools: { web: true, brain: true } },
    kind: 'workflow_task',
    input: 'What does the East China supplier charge?',
    task: { instructions: 'Find the East China supplier price in your Brain.', resultSchema },
    model: { script },
  };
}

describe.each(BRAIN_RUNTIMES)('the Brain tools in turns on $dialect', ({ start }) => {
  let runtime: TestRuntime;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ runtime, stop } = await start());
  });
  afterAll(async () => {
    await stop();
  });

  it('remembers, recalls, reads and forgets pages in a main turn, with labels a person reads gladly', async () => {
    const { body, events } = await runTurn(runtime, {
      agent: { id: 'acme', tools: { brain: true } },
      input: 'Keep these notes.',
      model: {
        script: [
          {
            calls: [
              { name: 'remember', callId: 'r1', arguments: { title: 'Vendor pricing', content: 'Acme charges $4 per seat per month.', tags: ['vendors', 'pricing'] } },
              { name: 'remember', callId: 'r2', arguments: { content: '# 供应商价格\n华东供应商的报价是每吨三千二百元，运费另计。' } },
              { name: 'remember', callId: 'r3', arguments: { title: '東京オフィス', content: '東京オフィスは渋谷区にあります。' } },
            ],
          },
          {
            calls: [
              { name: 'recall', callId: 'q1', arguments: { query: 'pricing' } },
              { name: 'recall', callId: 'q2', arguments: { query: '报价', budget_tokens: 500 } },
              { name: 'recall', callId: 'q3', arguments: { query: '渋谷' } },
              { name: 'get_page', callId: 'g1', arguments: { reference: 'vendor-pricing' } },
              { name: 'get_page', callId: 'g2', arguments: { reference: '../x' } },
            ],
          },
          {
            calls: [
              { name: 'remember', callId: 'r4', arguments: { title: 'Vendor pricing', content: 'A second page with the same title.' } },
              { name: 'remember', callId: 'r5', arguments: { reference: 'vendor-pricing', title: 'Vendor pricing', content: 'Acme charges $5 per seat per month from 2027.', tags: ['vendors'] } },
            ],
          },
          { calls: [{ name: 'forget', callId: 'f1', arguments: { reference: 'vendor-pricing-2' } }, { name: 'forget', callId: 'f2', arguments: { reference: 'vendor-pricing-2' } }] },
          { text: 'Noted.' },
        ],
      },
    });
    expect(body.status).toBe('completed');
    expect(events[0]).toMatchObject({ type: 'turn.started', tools: ['remember', 'recall', 'get_page', 'forget'] });
    expect(events[0]?.['unavailableSources']).toEqual([]);

    expect(byCall(events, 'tool.started', 'r1')).toMatchObject({ label: 'Remembering “Vendor pricing”', executionMode: 'sequential' });
    expect(byCall(events, 'tool.completed', 'r1')).toMatchObject({ label: 'Remembered “Vendor pricing”', details: { reference: 'vendor-pricing', created: true } });
    expect(byCall(events, 'tool.started', 'r2')?.['label']).toBe('Remembering “供应商价格”');
    expect(byCall(events, 'tool.completed', 'r2')).toMatchObject({ label: 'Remembered “供应商价格”', details: { reference: '供应商价格' } });
    expect(byCall(events, 'tool.completed', 'r3')?.['details']).toMatchObject({ reference: '東京オフィス' });

    expect(byCall(events, 'tool.started', 'q1')).toMatchObject({ label: 'Recalling “pricing”', executionMode: 'parallel' });
    expect(byCall(events, 'tool.completed', 'q1')?.['label']).toBe('Recalled 1 page for “pricing”');
    expect(byCall(events, 'tool.completed', 'q1')?.['output']).toContain('[vendor-pricing] Vendor pricing');
    expect(byCall(events, 'tool.completed', 'q2')?.['label']).toBe('Recalled 1 page for “报价”');
    expect(byCall(events, 'tool.completed', 'q2')?.['output']).toContain('华东供应商的报价');
    expect(byCall(events, 'tool.completed', 'q2')?.['details']).toMatchObject({ budgetTokens: 500 });
    expect(byCall(events, 'tool.completed', 'q3')?.['output']).toContain('[東京オフィス]');
    expect(byCall(events, 'tool.completed', 'g1')).toMatchObject({ label: 'Read “Vendor pricing” (35 B)' });
    expect(byCall(events, 'tool.completed', 'g1')?.['output']).toContain('Acme charges $4 per seat per month.');
    expect(byCall(events, 'tool.failed', 'g2')).toMatchObject({ error: { code: 'tool_error' } });
    expect(byCall(events, 'tool.failed', 'g2')?.['output']).toContain('a page reference starts with a letter or digit');

    expect(byCall(events, 'tool.completed', 'r4')?.['details']).toMatchObject({ reference: 'vendor-pricing-2', created: true });
    expect(byCall(events, 'tool.completed', 'r5')).toMatchObject({ label: 'Updated “Vendor pricing”', details: { reference: 'vendor-pricing', created: false } });
    expect(byCall(events, 'tool.started', 'f1')).toMatchObject({ label: 'Forgetting “vendor-pricing-2”' });
    expect(byCall(events, 'tool.completed', 'f1')?.['label']).toBe('Forgot “Vendor pricing”');
    expect(byCall(events, 'tool.failed', 'f2')?.['output']).toContain('there is no page "vendor-pricing-2"');

    const page = await readJson(await fetch(`${runtime.baseUrl}/agents/acme/brain/pages/vendor-pricing`));
    expect(page).toMatchObject({ content: 'Acme charges $5 per seat per month from 2027.', tags: ['vendors'] });
    expect((await fetch(`${runtime.baseUrl}/agents/acme/brain/pages/vendor-pricing-2`)).status).toBe(404);
  });

  it('recalls in a workflow task turn (read-only, parallel) and submits what it found', async () => {
    const { body, events } = await runTurn(
      runtime,
      task('acme', [
        { calls: [{ name: 'recall', callId: 'q', arguments: { query: '华东供应商 报价' } }, { name: 'get_page', callId: 'g', arguments: { reference: '供应商价格' } }] },
        { calls: [{ name: 'submit_result', arguments: { result: { price: '3200 yuan per tonne' } } }] },
      ]),
    );
    expect(body).toMatchObject({ status: 'completed', result: { price: '3200 yuan per tonne' } });
    expect(events[0]).toMatchObject({ tools: ['web_fetch', 'recall', 'get_page', 'submit_result'] });
    expect(byCall(events, 'tool.started', 'q')).toMatchObject({ executionMode: 'parallel' });
    expect(byCall(events, 'tool.completed', 'q')?.['output']).toContain('[供应商价格] 供应商价格');
    expect(byCall(events, 'tool.completed', 'g')?.['output']).toContain('每吨三千二百元');
    const tools = await readJson(await fetch(`${runtime.baseUrl}/turns/${body.id as string}/tools`));
    for (const name of ['recall', 'get_page']) {
      expect(tools.tools.find((tool: { name: string }) => tool.name === name)).toMatchObject({ isReadOnly: true, isDestructive: false, executionMode: 'parallel' });
    }
  });

  it('never gives a workflow task remember or forget, and never another agent’s pages', async () => {
    const { body, events } = await runTurn(
      runtime,
      task('rival', [
        {
          calls: [
            { name: 'recall', callId: 'q', arguments: { query: '报价 pricing 渋谷' } },
            { name: 'get_page', callId: 'g', arguments: { reference: '供应商价格' } },
            { name: 'remember', callId: 'w', arguments: { content: 'sneaky' } },
            { name: 'forget', callId: 'f', arguments: { reference: '供应商价格' } },
          ],
        },
        { calls: [{ name: 'submit_result', arguments: { result: { price: 'unknown' } } }] },
      ]),
    );
    expect(body.status).toBe('completed');
    expect(byCall(events, 'tool.completed', 'q')).toMatchObject({ label: 'Recalled nothing for “报价 pricing 渋谷”', output: 'No page matches “报价 pricing 渋谷”.' });
    expect(byCall(events, 'tool.failed', 'g')?.['output']).toContain('there is no page "供应商价格"');
    expect(byCall(events, 'tool.failed', 'w')).toMatchObject({ error: { code: 'unknown_tool' } });
    expect(byCall(events, 'tool.failed', 'f')).toMatchObject({ error: { code: 'unknown_tool' } });
    expect((await fetch(`${runtime.baseUrl}/agents/rival/brain/pages?limit=50`).then(readJson)).pages).toEqual([]);
    expect((await fetch(`${runtime.baseUrl}/agents/acme/brain/pages/${encodeURIComponent('供应商价格')}`)).status).toBe(200);
  });

  it('answers hostile or oversized remember calls with errors the model reads, writing nothing', async () => {
    const { body, events } = await runTurn(runtime, {
      agent: { id: 'careful', tools: { brain: true } },
      input: 'remember',
      model: {
        script: [
          {
            calls: [
              { name: 'remember', callId: 'dots', arguments: { reference: '../../etc/passwd', content: 'x' } },
              { name: 'remember', callId: 'long', arguments: { reference: 'y'.repeat(129), content: 'x' } },
              { name: 'remember', callId: 'big', arguments: { title: 'Big', content: 'z'.repeat(20_001) } },
              { name: 'remember', callId: 'nul', arguments: { title: 'Nul', content: 'a\u0000b' } },
              { name: 'remember', callId: 'proto', arguments: { reference: '__proto__', content: 'x' } },
            ],
          },
          { text: 'ok' },
        ],
      },
    });
    expect(body.status).toBe('completed');
    expect(byCall(events, 'tool.failed', 'dots')?.['output']).toContain('a page reference starts with a letter or digit');
    expect(byCall(events, 'tool.failed', 'long')?.['output']).toContain('at most 128 characters');
    expect(byCall(events, 'tool.failed', 'big')).toMatchObject({ error: { code: 'invalid_arguments' } });
    expect(byCall(events, 'tool.failed', 'nul')).toMatchObject({ error: { code: 'invalid_arguments' } });
    expect(byCall(events, 'tool.failed', 'proto')).toMatchObject({ error: { code: 'tool_error' } });
    expect((await fetch(`${runtime.baseUrl}/agents/careful/brain/pages`).then(readJson)).pages).toEqual([]);
  });

  it('clamps a recall budget over 12,000 and refuses one under 50 as invalid arguments', async () => {
    const { events } = await runTurn(runtime, {
      agent: { id: 'acme', tools: { brain: true } },
      input: 'recall',
      model: { script: [{ calls: [{ name: 'recall', callId: 'big', arguments: { query: 'pricing', budget_tokens: 50_000 } }, { name: 'recall', callId: 'tiny', arguments: { query: 'pricing', budget_tokens: 5 } }] }, { text: 'ok' }] },
    });
    expect(byCall(events, 'tool.completed', 'big')?.['details']).toMatchObject({ budgetTokens: 12_000 });
    expect(byCall(events, 'tool.failed', 'tiny')).toMatchObject({ error: { code: 'invalid_arguments' } });
  });
});
