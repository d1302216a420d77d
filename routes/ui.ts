import type { FastifyPluginAsyncZod } from '@fastify/type-provider-zod';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { InspectorAsset } from '../src/inspector/load-inspector-assets.js';

export interface UiRoutesOptions {
  readonly assets: ReadonlyMap<string, InspectorAsset>;
}

// The pages load only their own scripts and styles and talk only to this service.
const CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * The turn inspector: `GET /ui` (recent turns) and `GET /ui/turns/:id` (one turn's timeline,
 * tools and events), static files that read the API from the browser. The pages are public
 * like `/docs`; the data they show needs the API token, which the page asks for.
 */
export const uiRoutes: FastifyPluginAsyncZod<UiRoutesOptions> = async (app, { assets }) => {
  const send = (reply: FastifyReply, name: string) => {
    const asset = assets.get(name);
    if (asset === undefined) throw new Error(`the inspector file ${name} is missing from the ui folder`);
    return reply
      .type(asset.contentType)
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .serializer((payload: unknown) => payload as string)
      .send(asset.body);
  };
  app.get('/ui', { schema: { hide: true } }, async (_request, reply) => send(reply, 'index.html'));
  app.get('/ui/turns/:id', { schema: { hide: true, params: z.object({ id: z.string().min(1).max(200) }) } }, async (_request, reply) => send(reply, 'turn.html'));
  app.get('/ui/assets/:name', { schema: { hide: true, params: z.object({ name: z.string().regex(/^[a-z0-9-]+\.(js|css|svg)$/) }) } }, async (request, reply) => {
    if (assets.has(request.params.name)) return send(reply, request.params.name);
    reply.callNotFound();
    return reply;
  });
};
