import { ServiceError } from '../service-error.js';

export const pageNotFound = (reference: string) =>
  new ServiceError({ statusCode: 404, code: 'page_not_found', message: `this agent has no page "${Array.from(reference).slice(0, 128).join('')}"` });

/** A new page past the agent's cap (`BRAIN_PAGES_PER_AGENT`); replacing or deleting a page still works. */
export const brainFull = (limit: number) =>
  new ServiceError({
    statusCode: 409,
    code: 'brain_full',
    message: `this agent already keeps ${limit.toLocaleString('en')} pages, the most it may (BRAIN_PAGES_PER_AGENT); delete pages it no longer needs, or replace one by its reference`,
  });

export const invalidPageReference = (problem: string) =>
  new ServiceError({ statusCode: 400, code: 'invalid_request', message: `reference: ${problem}`, issues: [{ path: ['reference'], message: problem }] });
