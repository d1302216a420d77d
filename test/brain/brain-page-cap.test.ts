import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rememberPage } from '../../src/brain/remember-page.js';
import { ServiceError } from '../../src/service-error.js';
import { readJson, type TestRuntime } from '../support/test-runtime.js';
import { BRAIN_RUNTIMES } from './brain-runtimes.js';

const CAP = 3;

/** `BRAIN_PAGES_PER_AGENT`: one agent keeps at most that many pages, on both stores, also under concurrent writes. */
describe.each(BRAIN_RUNTIMES)('the Brain page cap on $dialect', ({ start }) => {
  let runtime: TestRuntime;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ runtime, stop } = await start({ BRAIN_PAGES_PER_AGENT: String(CAP) }));
  });
  afterAll(() => stop());

  const put = async (agentId: string, reference: string, content = 'notes') => {
    const response = await fetch(`${runtime.baseUrl}/agents/${agentId}/brain/pages/${reference}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: reference, content }) });
    return { status: response.status, body: await readJson(response) };
  };

  it('refuses a new page past the cap with 409 brain_full, and still replaces and deletes', async () => {
    for (let index = 1; index <= CAP; index += 1) expect((await put('full', `page-${index}`)).status).toBe(201);
    const refused = await put('full', 'one-more');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'brain_full', message: expect.stringContaining('BRAIN_PAGES_PER_AGENT') });
    expect((await fetch(`${runtime.baseUrl}/agents/full/brain/pages/one-more`)).status).toBe(404);

    // Replacing a page it has is not a new page; another agent has its own room.
    expect((await put('full', 'page-2', 'newer notes')).status).toBe(200);
    expect((await put('someone-else', 'page-1')).status).toBe(201);
    // A deleted page makes room again.
    expect((await fetch(`${runtime.baseUrl}/agents/full/brain/pages/page-1`, { method: 'DELETE' })).status).toBe(204);
    expect((await put('full', 'one-more')).status).toBe(201);

    // The model's remember tool hears the same, in words it can act on.
    const error = await rememberPage({ store: runtime.store.brain, agentId: 'full', content: 'Yet another page', now: new Date().toISOString() }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).message).toMatch(/delete pages it no longer needs, or replace one by its reference/);
  });

  it('lets exactly the cap through when 10 new pages are written at once', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, index) => put('raced', `page-${index}`)));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(CAP);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(10 - CAP);
    const listed = await readJson(await fetch(`${runtime.baseUrl}/agents/raced/brain/pages?limit=50`));
    expect(listed.pages).toHaveLength(CAP);
  });
});
