import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fastifyRateLimit from '@fastify/rate-limit';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler, type ZodTypeProvider } from '@fastify/type-provider-zod';
import Fastify, { type FastifyInstance, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { operationRoutes } from '../routes/operations.js';
import { turnEventRoutes } from '../routes/turn-events.js';
import { turnRoutes } from '../routes/turns.js';
import { backgroundJobRoutes } from '../routes/background-jobs.js';
import { scheduleRoutes } from '../routes/schedules.js';
import type { BackgroundJobService } from './background-jobs/background-job-service.js';
import type { ScheduleService } from './schedules/schedule-service.js';
import type { Config } from './config/config.js';
import { createAuthenticator } from './http/authenticate.js';
import { errorEnvelope } from './http/error-envelope.js';
import { handleError, handleNotFound } from './http/error-handler.js';
import type { TurnService } from './turns/turn-service.js';

/** The app as built: Zod-typed routes. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, ZodTypeProvider>;

export interface BuildAppOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly service: TurnService;
  readonly backgroundJobs?: BackgroundJobService;
  readonly schedules?: ScheduleService;
  readonly version?: string;
}

/**
 * Builds the HTTP app around a turn service. It does not listen: `server.ts` does, and tests
 * use `inject` or listen on port 0. Closing the app drains the service first.
 */
export async function buildApp(options: BuildAppOptions): Promise<App> {
  const { config, service } = options;
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: config.http.bodyLimitBytes,
    // Turn streams may run for many minutes; the turn's own timeout bounds them.
    requestTimeout: 0,
    return503OnClosing: true,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);

  // An empty JSON body reads as "no body" (so `curl -X POST -H 'content-type: application/json'`
  // on cancel works); anything else goes through Fastify's own parser, prototype-poisoning guard included.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // Every body is JSON: Fastify's text/plain parser would let a plain string through to validation.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    void parseJson(request, text, done);
  });

  if (config.http.apiToken !== undefined) app.addHook('onRequest', createAuthenticator(config.http.apiToken));
  if (config.http.rateLimitPerMinute > 0) {
    await app.register(fastifyRateLimit, {
      max: config.http.rateLimitPerMinute,
      timeWindow: 60_000,
      allowList: (request) => request.url === '/healthz' || request.url === '/readyz',
      errorResponseBuilder: (_request, context) =>
        Object.assign(new Error('rate limited'), { statusCode: 429, ...errorEnvelope('rate_limited', `over ${context.max} requests a minute; retry after ${context.after}`) }),
    });
  }

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'turn-runtime',
        version: options.version ?? '0.1.0',
        description: 'Runs agent turns: assembles tools, runs the model loop, streams activity and results.',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  await app.register(turnRoutes, { service, ssePingMs: config.http.ssePingMs });
  await app.register(turnEventRoutes, { service, ssePingMs: config.http.ssePingMs });
  await app.register(operationRoutes, { service });
  if (options.backgroundJobs !== undefined) await app.register(backgroundJobRoutes, { jobs: options.backgroundJobs, ssePingMs: config.http.ssePingMs });
  if (options.schedules !== undefined) await app.register(scheduleRoutes, { schedules: options.schedules });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());

  // Drain before the server stops listening: open streams end with their turns.
  app.addHook('preClose', async () => {
    await service.shutdown();
  });
  return app;
}
