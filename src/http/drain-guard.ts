import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorEnvelope } from './error-envelope.js';

/** Routes that keep answering while the server drains: liveness, readiness (it says 503 itself), and reads of turns, so running turns can be followed to their end. */
const OPEN_WHILE_DRAINING: ReadonlySet<string> = new Set(['GET /healthz', 'GET /readyz', 'GET /turns/:id', 'GET /turns/:id/events', 'GET /turns/:id/tools']);

/**
 * An `onRequest` hook: while the server drains, every other request is `503 shutting_down`
 * in the error envelope (Fastify's own 503 would not be), with `Connection: close`.
 */
export function createDrainGuard(isDraining: () => boolean): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return async (request, reply) => {
    if (!isDraining()) return;
    const route = `${request.method === 'HEAD' ? 'GET' : request.method} ${request.routeOptions.url ?? ''}`;
    if (OPEN_WHILE_DRAINING.has(route)) return;
    await reply.code(503).header('connection', 'close').send(errorEnvelope('shutting_down', 'the server is shutting down; retry on another instance'));
  };
}
