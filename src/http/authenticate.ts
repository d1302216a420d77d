import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorEnvelope } from './error-envelope.js';

// The inspector's pages are static; the data they read needs the token.
const PUBLIC_PATHS = ['/healthz', '/readyz', '/openapi.json', '/docs', '/ui'];

/**
 * Bearer-token authentication, when a token is configured: a missing token is 401, a wrong
 * one 403. Probes and the API documentation stay public. Compared as digests, in constant time.
 */
export function createAuthenticator(
  token: string,
  options: { readonly publicPaths?: readonly string[] } = {},
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const expected = createHash('sha256').update(token).digest();
  const publicPaths = [...PUBLIC_PATHS, ...(options.publicPaths ?? [])];
  return async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (publicPaths.some((publicPath) => path === publicPath || path.startsWith(`${publicPath}/`))) return;
    const header = request.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header);
    if (match?.[1] === undefined) {
      await reply.code(401).header('www-authenticate', 'Bearer').send(errorEnvelope('unauthorized', 'send Authorization: Bearer <token>'));
      return;
    }
    const given = createHash('sha256').update(match[1].trim()).digest();
    if (!timingSafeEqual(given, expected)) {
      await reply.code(403).send(errorEnvelope('forbidden', 'the token is not valid'));
    }
  };
}
