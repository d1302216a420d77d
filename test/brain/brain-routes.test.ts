import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, type TestRuntime } from '../support/test-runtime.js';
import { BRAIN_RUNTIMES } from './brain-runtimes.js';

const pageUrl = (runtime: TestRuntime, agentId: string, reference: string) => `${runtime.baseUrl}/agents/${agentId}/brain/pages/${encodeURIComponent(reference)}`;

async function put(runtime: TestRuntime, agentId: string, reference: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(pageUrl(runtime, agentId, reference), { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await readJson(response) };
}

async function search(runtime: TestRuntime, agentId: string, query: string, extra = ''): Promise<{ status: number; body: any }> {
  const response = await fetch(`${runtime.baseUrl}/agents/${agentId}/brain/pages?query=${encodeURIComponent(query)}${extra}`);
  return { status: response.status, body: await readJson(response) };
}

/** A request sent exactly as written: fetch would resolve `..` segments before sending. */
function rawGet(runtime: TestRuntime, path: string): Promise<{ status: number; body: any }> {
  const { port } = new URL(runtime.baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port: Number(port), path, method: 'GET' }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

describe.each(BRAIN_RUNTIMES)('the Brain over HTTP on $dialect', ({ start }) => {
  let runtime: TestRuntime;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ runtime, stop } = await start());
    await put(runtime, 'acme', 'vendor-pricing', { title: 'Vendor pricing', content: 'Acme charges $4 per seat per month. Volume discounts above 500 seats.', tags: ['vendors', 'pricing'] });
    await put(runtime, 'acme', '供应商价格', { title: '供应商价格', content: '华东供应商的报价是每吨三千二百元，运费另计。', tags: ['价格'] });
    await put(runtime, 'acme', '東京オフィス', { title: '東京オフィスの案内', content: '東京オフィスは渋谷区にあります。会議室は三階です。' });
  });
  afterAll(async () => {
    await stop();
  });

  it('creates a page with 201, replaces it with 200, and reads it back', async () => {
    const created = await put(runtime, 'acme', 'holidays', { title: 'Holidays', content: '25 days a year.', tags: ['hr', 'HR', 'leave'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ reference: 'holidays', title: 'Holidays', content: '25 days a year.', tags: ['hr', 'leave'] });
    expect(created.body.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const replaced = await put(runtime, 'acme', 'holidays', { title: 'Holiday policy', content: '26 days a year from 2027.' });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ reference: 'holidays', title: 'Holiday policy', tags: [] });
    const read = await fetch(pageUrl(runtime, 'acme', 'holidays'));
    expect(read.status).toBe(200);
    expect(await readJson(read)).toEqual(replaced.body);
  });

  it('searches English, Chinese and Japanese pages with snippets, references and scores', async () => {
    const english = await search(runtime, 'acme', 'seats pricing');
    expect(english.status).toBe(200);
    expect(english.body.pages[0]).toMatchObject({ reference: 'vendor-pricing', title: 'Vendor pricing', tags: ['vendors', 'pricing'] });
    expect(english.body.pages[0].snippet).toContain('per seat');
    expect(english.body.pages[0].score).toBeGreaterThan(0);
    expect(english.body).toMatchObject({ matched: 1, budgetTokens: 2000 });
    expect((await search(runtime, 'acme', '报价')).body.pages.map((page: { reference: string }) => page.reference)).toEqual(['供应商价格']);
    expect((await search(runtime, 'acme', '会議室')).body.pages.map((page: { reference: string }) => page.reference)).toEqual(['東京オフィス']);
    expect((await search(runtime, 'acme', 'nothing-like-this')).body).toEqual({ pages: [], matched: 0, budgetTokens: 2000 });
  });

  it('lists the most recent pages without a query, and clamps a budget over 12,000', async () => {
    const listed = await fetch(`${runtime.baseUrl}/agents/acme/brain/pages?limit=2`);
    const body = await readJson(listed);
    expect(body.pages).toHaveLength(2);
    expect(body.pages[0].score).toBeNull();
    expect(body.budgetTokens).toBeNull();
    expect((await search(runtime, 'acme', 'pricing', '&budget_tokens=999999')).body.budgetTokens).toBe(12_000);
  });

  it('takes references in any script, NFC-normalised', async () => {
    const decomposed = 'cafe\u0301-menu';
    expect((await put(runtime, 'acme', decomposed, { title: 'Café menu', content: 'Espresso 2 €.' })).status).toBe(201);
    const read = await fetch(pageUrl(runtime, 'acme', 'caf\u00e9-menu'));
    expect(read.status).toBe(200);
    expect((await readJson(read)).reference).toBe('caf\u00e9-menu');
    expect((await fetch(pageUrl(runtime, 'acme', '供应商价格'))).status).toBe(200);
    const longest = '价'.repeat(128);
    expect((await put(runtime, 'acme', longest, { title: 'Long', content: 'A long reference.' })).status).toBe(201);
  });

  it('refuses hostile references with a 400 naming the reference, and finds nothing through them', async () => {
    for (const reference of ['../x', '.hidden', 'a/b', 'a\\b', 'x'.repeat(129), '价'.repeat(129), 'nul\u0000byte', ' space', 'a..b', '-dash']) {
      const response = await fetch(pageUrl(runtime, 'acme', reference));
      expect(response.status, reference).toBe(400);
      const body = await readJson(response);
      expect(body.error).toMatchObject({ code: 'invalid_request' });
      expect(body.error.issues[0].path).toEqual(['reference']);
      expect((await fetch(pageUrl(runtime, 'acme', reference), { method: 'DELETE' })).status).toBe(400);
      expect((await put(runtime, 'acme', reference, { title: 't', content: 'c' })).status).toBe(400);
    }
    // A bare `..` (fetch would resolve it away) and unencoded dot segments, sent as written.
    for (const path of ['/agents/acme/brain/pages/..', '/agents/acme/brain/pages/%2E%2E', '/agents/acme/brain/pages/%2e%2e%2fvendor-pricing']) {
      const answer = await rawGet(runtime, path);
      expect(answer.status, path).toBe(400);
      expect(answer.body.error.issues[0].path).toEqual(['reference']);
    }
    const dots = await rawGet(runtime, '/agents/acme/brain/pages/../pages/vendor-pricing');
    expect(dots.status).toBe(404);
    expect(dots.body.error.code).toMatch(/not_found/);
    const huge = await rawGet(runtime, `/agents/acme/brain/pages/${'y'.repeat(5000)}`);
    // Refused by the router before any route (Fastify answers 414 itself; the error envelope
    // for router errors is the v2 envelope work's).
    expect([400, 404, 414]).toContain(huge.status);
    expect((await fetch(`${runtime.baseUrl}/agents/..%2Fetc/brain/pages`)).status).toBe(400);
    expect((await fetch(`${runtime.baseUrl}/agents/${'a'.repeat(65)}/brain/pages`)).status).toBe(400);
  });

  it("never shows one agent another agent's pages", async () => {
    const other = await fetch(pageUrl(runtime, 'rival', 'vendor-pricing'));
    expect(other.status).toBe(404);
    expect((await readJson(other)).error).toEqual({ code: 'page_not_found', message: 'this agent has no page "vendor-pricing"' });
    expect((await search(runtime, 'rival', 'pricing 报价 会議室')).body.pages).toEqual([]);
    expect((await readJson(await fetch(`${runtime.baseUrl}/agents/rival/brain/pages`))).pages).toEqual([]);
    expect((await fetch(pageUrl(runtime, 'rival', 'vendor-pricing'), { method: 'DELETE' })).status).toBe(404);
    // The rival writing the same reference makes its own page; acme's is untouched.
    expect((await put(runtime, 'rival', 'vendor-pricing', { title: 'Mine', content: 'Rival prices.' })).status).toBe(201);
    expect((await readJson(await fetch(pageUrl(runtime, 'acme', 'vendor-pricing')))).title).toBe('Vendor pricing');
    expect((await search(runtime, 'acme', 'rival')).body.pages).toEqual([]);
  });

  it('bounds sizes with 400s that name the field, and loses nothing', async () => {
    const cases: [unknown, (string | number)[]][] = [
      [{ title: 'T', content: 'x'.repeat(20_001) }, ['content']],
      [{ title: 'T'.repeat(201), content: 'c' }, ['title']],
      [{ title: '   ', content: 'c' }, ['title']],
      [{ title: 'T', content: '' }, ['content']],
      [{ title: 'T', content: 'bad \u0000 byte' }, ['content']],
      [{ title: 'T', content: 'c', tags: Array.from({ length: 21 }, (_, index) => `t${index}`) }, ['tags']],
      [{ title: 'T', content: 'c', tags: ['x'.repeat(51)] }, ['tags', 0]],
      [{ title: 'T', content: 'c', extra: true }, []],
      [{ content: 'c' }, ['title']],
    ];
    for (const [body, path] of cases) {
      const answer = await put(runtime, 'acme', 'vendor-pricing', body);
      expect(answer.status, JSON.stringify(path)).toBe(400);
      expect(answer.body.error.code).toBe('invalid_request');
      if (path.length > 0) expect(answer.body.error.issues[0].path).toEqual(path);
    }
    const huge = await fetch(pageUrl(runtime, 'acme', 'vendor-pricing'), { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'T', content: 'x'.repeat(1_100_000) }) });
    expect(huge.status).toBe(413);
    const text = await fetch(pageUrl(runtime, 'acme', 'vendor-pricing'), { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(text.status).toBe(415);
    expect((await search(runtime, 'acme', 'q'.repeat(501))).status).toBe(400);
    expect((await search(runtime, 'acme', 'pricing', '&limit=0')).status).toBe(400);
    expect((await search(runtime, 'acme', 'pricing', '&budget_tokens=10')).status).toBe(400);
    expect((await search(runtime, 'acme', 'pricing', '&budget_tokens=lots')).status).toBe(400);
    expect((await search(runtime, 'acme', 'pricing', '&surprise=1')).status).toBe(400);
    expect((await readJson(await fetch(pageUrl(runtime, 'acme', 'vendor-pricing')))).content).toBe('Acme charges $4 per seat per month. Volume discounts above 500 seats.');
  });

  it('deletes a page with 204, then answers 404 page_not_found', async () => {
    await put(runtime, 'acme', 'scratch', { title: 'Scratch', content: 'A narwhal note.' });
    expect((await search(runtime, 'acme', 'narwhal')).body.pages).toHaveLength(1);
    const deleted = await fetch(pageUrl(runtime, 'acme', 'scratch'), { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect((await fetch(pageUrl(runtime, 'acme', 'scratch'), { method: 'DELETE' })).status).toBe(404);
    expect((await fetch(pageUrl(runtime, 'acme', 'scratch'))).status).toBe(404);
    expect((await search(runtime, 'acme', 'narwhal')).body.pages).toEqual([]);
  });
});
