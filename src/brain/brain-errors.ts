import { ServiceError } from '../service-error.js';

export const pageNotFound = (reference: string) =>
  new ServiceError({ statusCode: 404, code: 'page_not_found', message: `this agent has no page "${Array.from(reference).slice(0, 128).join('')}"` });

export const invalidPageReference = (problem: string) =>
  new ServiceError({ statusCode: 400, code: 'invalid_request', message: `reference: ${problem}`, issues: [{ path: ['reference'], message: problem }] });
