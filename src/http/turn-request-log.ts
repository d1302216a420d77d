import type { FastifyReply, FastifyRequest } from 'fastify';

/** Puts `turnId` on the request's log lines from here on ("request completed" included). */
export function bindTurnToRequestLog(options: { readonly request: FastifyRequest; readonly reply: FastifyReply; readonly turnId: string }): void {
  const { request, reply, turnId } = options;
  request.log = request.log.child({ turnId });
  reply.log = request.log;
}

/**
 * A `preHandler` hook for the routes about one turn (`/turns/:id…`): their request logs carry
 * the `turnId`, so a person can follow one turn through every request about it.
 */
export function bindTurnIdOfRoute(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const params = request.params;
  const turnId = typeof params === 'object' && params !== null && 'id' in params ? params.id : undefined;
  if (request.routeOptions.url?.startsWith('/turns/:id') === true && typeof turnId === 'string') bindTurnToRequestLog({ request, reply, turnId });
  done();
}
