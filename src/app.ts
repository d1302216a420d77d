import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fastifyRateLimit from '@fastify/rate-limit';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler, type ZodTypeProvider } from '@fastify/type-provider-zod';
import Fastify, { type FastifyInstance, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { brainRoutes } from '../routes/brain.js';
import { approvalRoutes } from '../routes/approvals.js';
import { metricsRoutes } from '../routes/metrics.js';
import { operationRoutes } from '../routes/operations.js';
import { turnEventRoutes } from '../routes/turn-events.js';
import { turnListRoutes } from '../routes/turn-list.js';
import { uiRoutes } from '../routes/ui.js';
import { turnRoutes } from '../routes/turns.js';
import type { BrainStore } from './brain/brain-store.js';
import type { Clock } from './clock.js';
import { workflowRoutes } from '../routes/workflows.js';
import { backgroundJobRoutes } from '../routes/background-jobs.js';
import { scheduleRoutes } from '../routes/schedules.js';
import type { BackgroundJobService } from './background-jobs/background-job-service.js';
import type { ScheduleService } from './schedules/schedule-service.js';
import type { Config } from './config/config.js';
import { createAuthenticator } from './http/authenticate.js';
import { createDrainGuard } from './http/drain-guard.js';
import { handleError, handleNotFound } from './http/error-handler.js';
import { handleClientError, handleFrameworkError } from './http/framework-errors.js';
import { ServiceError } from './service-error.js';
import { refineOpenApiDocument } from './http/refine-openapi-document.js';
import { bindTurnIdOfRoute } from './http/turn-request-log.js';
import type { JsonObject } from './json.js';
import { loadInspectorAssets } from './inspector/load-inspector-assets.js';
import type { ServiceMetrics } from './observability/service-metrics.js';
import type { ApprovalService } from './approvals/approval-service.js';
import type { TurnService } from './turns/turn-service.js';
import type { WorkflowEngine } from './workflows/workflow-engine.js';

/** The app as built: Zod-typed routes. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, ZodTypeProvider>;

export interface BuildAppOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly service: TurnService;
  /** Decisions on parked calls, for `POST /turns/:id/approvals/:callId`. */
  readonly approvals: ApprovalService;
  /** Each agent's Brain pages, for the `/agents/:agentId/brain` routes. */
  readonly brain: BrainStore;
  readonly clock: Clock;
  /** Serves the workflow routes when given. */
  readonly workflows?: WorkflowEngine;
  readonly metrics: ServiceMetrics;
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
    // Bounds receiving the request only (a body that never arrives is not held); an answer
    // may stream for as long as its turn runs. Node checks these every second, not every 30 s.
    requestTimeout: config.http.requestTimeoutMs,
    http: { headersTimeout: config.http.headersTimeoutMs, connectionsCheckingInterval: 1_000 },
    // Draining is answered by our own hook, in the error envelope, and reads keep working.
    return503OnClosing: false,
    // Ids up to 200 characters are valid (the schemas say so); longer ones are refused by the schemas as 400s.
    routerOptions: { maxParamLength: 2_048 },
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);
  app.addHook('preHandler', bindTurnIdOfRoute);

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

  app.addHook('onRequest', createDrainGuard(() => service.draining));
  if (config.http.apiToken !== undefined) {
    app.addHook('onRequest', createAuthenticator(config.http.apiToken, { publicPaths: config.observability.metricsPublic ? ['/metrics'] : [] }));
  }
  if (config.http.rateLimitPerMinute > 0) {
    await app.register(fastifyRateLimit, {
      max: config.http.rateLimitPerMinute,
      timeWindow: 60_000,
      allowList: (request) => request.url === '/healthz' || request.url === '/readyz',
      // A ServiceError, so the one error handler keeps this message (it says the limit).
      errorResponseBuilder: (_request, context) =>
        new ServiceError({ statusCode: 429, code: 'rate_limited', message: `over the limit of ${context.max} requests a minute per client; retry after ${context.after}` }),
    });
  }

  const openApiPublicPaths = ['/healthz', '/readyz', ...(config.observability.metricsPublic ? ['/metrics'] : [])];
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
    // The route schemas, then what they cannot say (streams, headers, security, operation ids).
    transformObject: (input) =>
      refineOpenApiDocument(JSON.parse(JSON.stringify(jsonSchemaTransformObject(input))) as JsonObject, { publicPaths: openApiPublicPaths }) as ReturnType<typeof jsonSchemaTransformObject>,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  const authEnabled = config.http.apiToken !== undefined;
  await app.register(turnRoutes, { service, ssePingMs: config.http.ssePingMs, authEnabled });
  await app.register(turnEventRoutes, { service, ssePingMs: config.http.ssePingMs });
  await app.register(approvalRoutes, { approvals: options.approvals });
  await app.register(operationRoutes, { service });
  await app.register(brainRoutes, { brain: options.brain, clock: options.clock });
  if (options.workflows !== undefined) await app.register(workflowRoutes, { engine: options.workflows, ssePingMs: config.http.ssePingMs, authEnabled });
  await app.register(metricsRoutes, { metrics: options.metrics });
  await app.register(turnListRoutes, { service });
  await app.register(uiRoutes, { assets: await loadInspectorAssets() });
  if (options.backgroundJobs !== undefined) await app.register(backgroundJobRoutes, { jobs: options.backgroundJobs, ssePingMs: config.http.ssePingMs, authEnabled });
  if (options.schedules !== undefined) await app.register(scheduleRoutes, { schedules: options.schedules, authEnabled });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());

  // Drain before the server stops listening: open streams end with their turns.
  app.addHook('preClose', async () => {
    await service.shutdown();
  });
  return app;
}
