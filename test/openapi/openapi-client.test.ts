import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCRIPTED_TURN_EXAMPLE } from '../../src/http/refine-openapi-document.js';
import { launchChromium } from '../support/headless-chromium.js';
import { startTestRuntime, type TestRuntime } from '../support/test-runtime.js';

const root = path.resolve(import.meta.dirname, '../..');
const token = 'openapi-test-token-0123456789';

describe('the OpenAPI document, as a generator uses it', () => {
  let runtime: TestRuntime;
  let document: any;
  beforeAll(async () => {
    runtime = await startTestRuntime({ env: { API_TOKEN: token } });
    document = await (await fetch(`${runtime.baseUrl}/openapi.json`)).json();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('validates as OpenAPI 3.1', async () => {
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeDefined();
  });

  it('names every operation once and puts bearer security on every protected one', () => {
    const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([route, item]) => Object.entries(item).map(([method, operation]) => ({ route, method, operation: operation as Record<string, unknown> })));
    const ids = operations.map((entry) => entry.operation['operationId']);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { route, operation } of operations) {
      expect(operation['security']).toEqual(['/healthz', '/readyz'].includes(route) ? [] : [{ bearer: [] }]);
    }
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('declares the streaming answers of POST /turns, its headers, and the event union on type', () => {
    const operation = document.paths['/turns'].post;
    const ok = operation.responses['200'];
    expect(Object.keys(ok.content)).toEqual(['application/json', 'text/event-stream', 'application/x-ndjson']);
    expect(ok.content['application/x-ndjson'].schema.$ref).toBe('#/components/schemas/TurnEvent');
    expect(Object.keys(ok.headers)).toEqual(['turn-id', 'idempotent-replayed']);
    expect((operation.parameters as { in: string; name: string }[]).filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name)).toEqual(expect.arrayContaining(['Idempotency-Key', 'Last-Event-ID']));
    const union = document.components.schemas.TurnEvent;
    expect(union.discriminator.propertyName).toBe('type');
    expect(union.discriminator.mapping['tool.started']).toBe('#/components/schemas/ToolStartedEvent');
    expect(Object.keys(union.discriminator.mapping)).toHaveLength(union.oneOf.length);
    expect(operation.requestBody.content['application/json'].example).toEqual(SCRIPTED_TURN_EXAMPLE);
  });

  it('generates a client (openapi-typescript) whose types accept the real answers, fetched with openapi-fetch', async () => {
    const client = createClient<any>({ baseUrl: runtime.baseUrl, headers: { authorization: `Bearer ${token}` } });
    const created = await client.POST('/turns', { body: SCRIPTED_TURN_EXAMPLE, headers: { accept: 'application/json' } });
    expect(created.response.status).toBe(200);
    const turnId = created.response.headers.get('turn-id') ?? '';
    const record = await client.GET('/turns/{id}', { params: { path: { id: turnId } } });
    const tools = await client.GET('/turns/{id}/tools', { params: { path: { id: turnId } } });
    const list = await client.GET('/turns', { params: { query: { agentId: 'demo', limit: 5 } } });
    const missing = await client.GET('/turns/{id}', { params: { path: { id: 'turn_missing' } } });
    const ndjson = await fetch(`${runtime.baseUrl}/turns/${turnId}/events`, { headers: { accept: 'application/x-ndjson', authorization: `Bearer ${token}` } });
    const events = (await ndjson.text()).trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(events.length).toBeGreaterThan(3);

    const folder = await mkdtemp(path.join(root, '.openapi-client-'));
    try {
      await writeFile(path.join(folder, 'api.ts'), astToString(await openapiTS(structuredClone(document))));
      // The real answers, as literals typed with the generated schema: excess or missing fields fail tsc.
      const literal = (value: unknown) => JSON.stringify(value, null, 2);
      await writeFile(
        path.join(folder, 'check.ts'),
        [
          "import createClient from 'openapi-fetch';",
          "import type { components, paths } from './api.js';",
          "type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: { content: { 'application/json': infer T } } } } ? T : never;",
          `export const created: Ok<'/turns', 'post'> = ${literal(created.data)};`,
          `export const record: components['schemas']['TurnRecord'] = ${literal(record.data)};`,
          `export const tools: components['schemas']['TurnTools'] = ${literal(tools.data)};`,
          `export const list: Ok<'/turns', 'get'> = ${literal(list.data)};`,
          `export const missing: components['schemas']['Error'] = ${literal(missing.error)};`,
          `export const events: components['schemas']['TurnEvent'][] = ${literal(events)};`,
          'export const client = createClient<paths>({ baseUrl: "http://localhost" });',
          "export const call = () => client.POST('/turns', { body: { agent: { id: 'a' }, input: 'x', model: { script: [{ text: 'y' }] } }, params: { header: { 'Idempotency-Key': 'k-1' } } });",
          "export const narrowed = (event: components['schemas']['TurnEvent']): string => (event.type === 'tool.started' ? event.label : event.type);",
        ].join('\n'),
      );
      const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
      const run = promisify(execFile)(process.execPath, [tsc, '--noEmit', '--strict', '--exactOptionalPropertyTypes', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', path.join(folder, 'check.ts')], { cwd: root });
      const failure = await run.then(
        () => '',
        (error: unknown) => (typeof error === 'object' && error !== null && 'stdout' in error ? String(error.stdout) : 'tsc failed'),
      );
      expect(failure).toBe('');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }, 120_000);

  it('runs the pre-filled example from /docs "Try it out", with the token given to Authorize', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
      await page.goto(`${runtime.baseUrl}/docs`);
      await page.click('button.authorize');
      await page.fill('.modal-ux input[type="text"], .modal-ux input[type="password"]', token);
      await page.click('.modal-ux button.authorize');
      await page.click('.modal-ux button.btn-done');
      await page.click('#operations-turns-createTurn .opblock-summary');
      await page.click('#operations-turns-createTurn button.try-out__btn');
      await page.click('#operations-turns-createTurn button.execute');
      await page.waitForSelector('#operations-turns-createTurn .responses-wrapper .live-responses-table .response-col_status');
      const status = await page.textContent('#operations-turns-createTurn .live-responses-table tbody .response-col_status');
      expect(status?.trim()).toBe('200');
      expect(await page.textContent('#operations-turns-createTurn .live-responses-table')).toContain('turn.completed');
    } finally {
      await browser.close();
    }
  }, 60_000);
});
