import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import { buildApp, type App } from './app.js';
import { ApprovalService } from './approvals/approval-service.js';
import { resumeParkedTurn } from './approvals/resume-parked-turn.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/config.js';
import { prepareDataDir } from './config/prepare-data-dir.js';
import type { HostLookup } from './net/guarded-lookup.js';
import { defaultSandboxLimits, detectCommandSandbox } from './sandbox/detect-sandbox.js';
import { armCrashPoints } from './durable/crash-points.js';
import { openDurableWork } from './durable/open-durable-work.js';
import { Retention } from './durable/retention.js';
import type { DurableWork } from './durable/durable-work.js';
import { openStoreDatabase, openTurnStoreOn } from './store/open-turn-store.js';
import { createObservability } from './observability/create-observability.js';
import { createStoreCounts } from './store/create-store-counts.js';
import { createTracingFetch } from './observability/genai-tracing.js';
import { createProviderFetch } from './models/provider-fetch.js';
import type { Observability } from './observability/observability.js';
import { loadMcpConfig } from './tools/mcp/load-mcp-config.js';
import { EMPTY_MCP_CONFIG } from './tools/mcp/mcp-config.js';
import { McpRegistry } from './tools/mcp/mcp-registry.js';
import { loadSkillCatalog } from './tools/skills/load-skill-catalog.js';
import { locateMcporter, mcporterCommand } from './tools/skills/locate-mcporter.js';
import { EMPTY_SKILL_CATALOG } from './tools/skills/skill-catalog.js';
import { WebFetchCache } from './tools/web/fetch/web-fetch-cache.js';
import { AgentCaches } from './turns/assembly/agent-caches.js';
import type { TurnStore } from './store/turn-store.js';
import { createSearchProvider } from './tools/web/search/create-search-provider.js';
import type { ToolServices } from './turns/assembly/tool-services.js';
import { createSharedModelEndpoint, hasModelProvider } from './turns/create-model-client.js';
import { ScriptRunner } from './workflows/script/script-runner.js';
import { WorkflowEngine } from './workflows/workflow-engine.js';
import { WorkflowStore } from './workflows/workflow-store.js';
import type { WorkflowTables } from './workflows/workflow-tables.js';
import { openTurnSignals } from './turns/coordination/open-turn-signals.js';
import type { TurnSignals } from './turns/coordination/turn-signals.js';
import { TurnService } from './turns/turn-service.js';
import { viewTables } from './store/view-tables.js';
import { TurnWebhookOutbox, type TurnWebhookTables } from './webhooks/turn-webhook-outbox.js';
import { WebhookService } from './webhooks/webhook-service.js';
import type { WebhookTables } from './webhooks/webhook-tables.js';
import { BackgroundJobService } from './background-jobs/background-job-service.js';
import { backgroundJobToolSource } from './background-jobs/tools/create-background-job-tools.js';
import { scheduleToolSource } from './schedules/tools/schedule-tool-source.js';
import { createBrainTools } from './tools/brain/create-brain-tools.js';
import { workflowTaskPreparer } from './workflows/task-turn/prepare-workflow-task.js';
import { workflowToolSource } from './workflows/tools/create-workflow-tools.js';
import type { BackgroundJobTables } from './background-jobs/background-job-tables.js';
import { ScheduleService } from './schedules/schedule-service.js';
import type { ScheduleTables } from './schedules/schedule-tables.js';

export interface Runtime {
  readonly app: App;
  readonly service: TurnService;
  readonly store: TurnStore;
  /** Work that outlives a turn (workflows, background jobs, schedules, webhooks): pg-boss or the SQLite runner. */
  readonly durable: DurableWork;
  readonly webhooks: WebhookService;
  readonly workflows: WorkflowEngine;
  readonly observability: Observability;
  readonly backgroundJobs: BackgroundJobService;
  readonly schedules: ScheduleService;
  /** The periodic prune of finished durable work past `RETENTION_DAYS`. */
  readonly retention: Retention;
}

/** How often the retention job looks for finished work past its days (a pass with more left goes on at once). */
const RETENTION_INTERVAL_MS = 3_600_000;

/**
 * Wires the service from its configuration: the store, the tool services (sandbox, web
 * providers …), the turn service and the HTTP app. Closing the app drains turns, then closes
 * the store. `clock` and `newTurnId` are injectable for tests.
 */
export async function createRuntime(options: {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly newTurnId?: () => string;
  /** Name resolution for web_fetch; tests inject one to map names without real DNS. */
  readonly lookup?: HostLookup;
  /** Turns tracing on with these processors whatever the configuration says (tests: an in-memory exporter). */
  readonly spanProcessors?: readonly SpanProcessor[];
  readonly version?: string;
}): Promise<Runtime> {
  const { config, logger } = options;
  armCrashPoints(config.durable.testCrashAt);
  await prepareDataDir(config.dataDir);
  const database = await openStoreDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const store = await openTurnStoreOn(database, { logger: logger.child({ component: 'store' }), brainPagesPerAgent: config.brain.pagesPerAgent });
  const clock = options.clock ?? systemClock;
  let signals: TurnSignals | undefined;
  let durable: DurableWork | undefined;
  let mcp: McpRegistry | undefined;
  const observability = createObservability({
    config: config.observability,
    version: options.version ?? '0.1.0',
    spanProcessors: options.spanProcessors,
    counts: createStoreCounts({ db: database.db }),
    processCounts: { mcpSessions: () => mcp?.openSessionsByServer() ?? new Map() },
  });
  try {
    signals = await openTurnSignals({ databaseUrl: config.databaseUrl, logger });
    durable = await openDurableWork({ database, databaseUrl: config.databaseUrl, superviseSeconds: config.durable.superviseSeconds, leaseSeconds: config.durable.leaseSeconds, retentionDays: config.durable.retentionDays, clock, logger: logger.child({ component: 'durable' }) });
    const durableWork = durable;
    const webhooks = new WebhookService({
      durable,
      db: viewTables<WebhookTables>(database),
      secret: config.webhooks.secret,
      allowHosts: config.web.allowHosts,
      lookup: options.lookup,
      clock,
      logger: logger.child({ component: 'webhooks' }),
      metrics: observability.metrics,
    });
    await webhooks.start();
    const turnWebhooks = new TurnWebhookOutbox({ db: viewTables<TurnWebhookTables>(database), durable, webhooks, clock, logger: logger.child({ component: 'turn-webhooks' }) });
    const instanceId = config.instanceId ?? hostname();
    const workflows = new WorkflowEngine({
      store: new WorkflowStore({ db: viewTables<WorkflowTables>(database), durable, now: () => clock.now().toISOString() }),
      durable,
      scripts: new ScriptRunner({ workers: config.workflows.scriptWorkers, logger: logger.child({ component: 'workflow-scripts' }) }),
      webhooks,
      settings: config.workflows,
      clock,
      logger: logger.child({ component: 'workflows' }),
      instanceId,
      hasModelProvider: hasModelProvider(config.model),
      metrics: observability.metrics,
    });
    const backgroundJobs = new BackgroundJobService({
      db: viewTables<BackgroundJobTables>(database),
      durable,
      webhooks,
      store,
      clock,
      logger: logger.child({ component: 'background-jobs' }),
      instanceId,
      // One process owns a SQLite file: every job a driver held at start is its previous life's.
      soleProcess: database.dialect === 'sqlite',
    });
    const schedules = new ScheduleService({ db: viewTables<ScheduleTables>(database), durable, webhooks, store, clock, logger: logger.child({ component: 'schedules' }) });
    const webFetchCaches = new AgentCaches({ create: () => new WebFetchCache({ clock }), maxAgents: 256 });
    // Read once here; a bad file stops start-up (McpConfigError names the file and the path).
    const mcpConfig = config.mcpConfigFile === undefined ? EMPTY_MCP_CONFIG : await loadMcpConfig(config.mcpConfigFile);
    // Skills call MCP servers with mcporter from run_command, so the sandbox carries it.
    const mcporter = await locateMcporter();
    // The homes live here; the probe proves the sandbox user can reach them (the folder is passable, not listable).
    const homesFolder = path.join(config.dataDir, 'agents');
    await mkdir(homesFolder, { recursive: true, mode: 0o711 });
    const sandbox = await detectCommandSandbox({
      probeFolder: homesFolder,
      bwrapPath: config.sandbox.bwrapPath,
      unsafeWithoutSandbox: config.sandbox.unsafeWithoutSandbox,
      allowNetwork: config.sandbox.allowNetwork,
      outputLimitBytes: config.sandbox.outputLimitBytes,
      // No single file a command writes may be larger than the whole home may be.
      limits: { maxMemoryBytes: config.sandbox.memoryMaxBytes, maxFileSizeBytes: Math.min(defaultSandboxLimits.maxFileSizeBytes, config.sandbox.homeMaxBytes) },
      sandboxUid: config.sandbox.uid,
      sandboxGid: config.sandbox.gid,
      logger,
      additions: {
        readOnlyBinds: [...config.sandbox.readOnlyPaths.map((folder) => ({ source: folder, target: folder })), ...(mcporter?.sandboxAdditions.readOnlyBinds ?? [])],
        commands: mcporter?.sandboxAdditions.commands ?? [],
      },
    });
    mcp = new McpRegistry({
      config: mcpConfig,
      clock,
      logger: logger.child({ component: 'mcp' }),
      // A backstop only: the loop's own tool timeout cancels a call first and reports it as a timeout.
      settings: { callTimeoutMs: config.limits.toolTimeoutMs + 5_000 },
      limits: config.mcpSessions,
      agentsFolder: homesFolder,
    });
    const toolServices: ToolServices = {
      clock,
      todoStore: store,
      sandbox,
      commandSettings: { defaultTimeoutMs: config.sandbox.defaultTimeoutMs, maxTimeoutMs: config.sandbox.maxTimeoutMs, homeMaxBytes: config.sandbox.homeMaxBytes },
      webFetch: {
        settings: config.web,
        cacheFor: (agentId) => webFetchCaches.get(agentId),
        ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
      },
      searchProvider: createSearchProvider({ settings: config.web.search }),
      mcp,
      skills: {
        catalog: config.skillsDir === undefined ? EMPTY_SKILL_CATALOG : await loadSkillCatalog({ folder: config.skillsDir, mcpConfig, logger: logger.child({ component: 'skills' }) }),
        mcporterCommand: mcporterCommand({ install: mcporter, sandbox }),
      },
      // The features built on turns plug in here; the turn core imports none of them.
      sources: {
        schedule: scheduleToolSource({ service: schedules }),
        backgroundJobs: backgroundJobToolSource({ service: backgroundJobs }),
        workflows: workflowToolSource({ engine: workflows }),
        brain: { tools: (turn) => createBrainTools({ agentId: turn.agent.id, store: store.brain, clock, readOnly: false }) },
      },
    };
    const services: ToolServices = { ...toolServices, taskTurns: workflowTaskPreparer({ services: toolServices, brain: store.brain, clock }) };
    const modelEndpoint = createSharedModelEndpoint({
      config: config.model,
      fetch: observability.tracing === undefined ? undefined : createTracingFetch({ tracing: observability.tracing, fetch: createProviderFetch() }),
    });
    const approvals = new ApprovalService({
      store,
      clock,
      logger,
      timeoutMs: config.approvals.timeoutMs,
      owner: instanceId,
      metrics: observability.metrics,
    });
    const service = await TurnService.start({
      config,
      store,
      services,
      modelEndpoint,
      approvals,
      logger,
      clock,
      newTurnId: options.newTurnId ?? (() => `turn_${randomUUID().replaceAll('-', '')}`),
      instanceId,
      sharedStore: config.databaseUrl !== undefined,
      signals,
      observability,
      turnWebhooks,
    });
    approvals.start({
      accepting: () => !service.draining,
      resume: async (turnId) => {
        service.adopt(await resumeParkedTurn({ turnId, config, store, services, modelEndpoint, logger, clock, approvals }));
      },
    });
    await workflows.start(service);
    const app = await buildApp({ config, logger, service, approvals, brain: store.brain, clock, workflows, backgroundJobs, schedules, metrics: observability.metrics });
    app.addHook('onClose', async () => {
      approvals.stop();
      turnWebhooks.close();
      schedules.close();
      await backgroundJobs.close();
      await workflows.close();
      await durableWork.stop();
      await services.mcp.close();
      await signals?.close();
      await store.close();
      await observability.tracing?.shutdown();
    });
    await backgroundJobs.start({ turns: service });
    await schedules.start({ turns: service });
    await turnWebhooks.start();
    const retention = new Retention({
      durable,
      days: config.durable.retentionDays,
      intervalMs: RETENTION_INTERVAL_MS,
      clock,
      logger: logger.child({ component: 'retention' }),
      pruners: [
        { name: 'workflowRuns', prune: (window) => workflows.pruneFinished(window) },
        { name: 'backgroundJobs', prune: (window) => backgroundJobs.pruneFinished(window) },
        { name: 'scheduleFires', prune: (window) => schedules.pruneFires(window) },
        { name: 'webhookAttempts', prune: (window) => webhooks.pruneAttempts(window) },
        { name: 'turnWebhooks', prune: (window) => turnWebhooks.prune(window) },
        { name: 'durableJobs', prune: (window) => durableWork.pruneFinished(window) },
      ],
    });
    await retention.start();
    return { app, service, store, durable: durableWork, webhooks, workflows, backgroundJobs, schedules, retention, observability };
  } catch (error) {
    await durable?.stop();
    await signals?.close();
    await store.close();
    await observability.tracing?.shutdown();
    throw error;
  }
}
