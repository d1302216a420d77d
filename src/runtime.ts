import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { buildApp, type App } from './app.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/config.js';
import type { HostLookup } from './net/guarded-lookup.js';
import { detectCommandSandbox } from './sandbox/detect-sandbox.js';
import { openDurableWork } from './durable/open-durable-work.js';
import type { DurableWork } from './durable/durable-work.js';
import { openStoreDatabase, openTurnStoreOn } from './store/open-turn-store.js';
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
import { createSharedOpenAIClient } from './turns/create-model-client.js';
import { TurnService } from './turns/turn-service.js';
import { viewTables } from './store/view-tables.js';
import { createTurnWebhooks } from './webhooks/turn-webhooks.js';
import { WebhookService } from './webhooks/webhook-service.js';
import type { WebhookTables } from './webhooks/webhook-tables.js';
import { BackgroundJobService } from './background-jobs/background-job-service.js';
import type { BackgroundJobTables } from './background-jobs/background-job-tables.js';
import { ScheduleService } from './schedules/schedule-service.js';
import type { ScheduleTables } from './schedules/schedule-tables.js';

export interface Runtime {
  readonly app: App;
  readonly service: TurnService;
  readonly store: TurnStore;
  /** Work that outlives a turn (workflows, and later jobs and schedules): pg-boss or the SQLite runner. */
  readonly durable: DurableWork;
  readonly webhooks: WebhookService;
  readonly backgroundJobs: BackgroundJobService;
  readonly schedules: ScheduleService;
}

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
}): Promise<Runtime> {
  const { config, logger } = options;
  const database = await openStoreDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const store = await openTurnStoreOn(database);
  const clock = options.clock ?? systemClock;
  let durable: DurableWork | undefined;
  try {
    durable = await openDurableWork({ database, databaseUrl: config.databaseUrl, superviseSeconds: config.durable.superviseSeconds, clock, logger: logger.child({ component: 'durable' }) });
    const durableWork = durable;
    const webhooks = new WebhookService({
      durable,
      db: viewTables<WebhookTables>(database),
      secret: config.webhooks.secret,
      allowHosts: config.web.allowHosts,
      lookup: options.lookup,
      clock,
      logger: logger.child({ component: 'webhooks' }),
    });
    await webhooks.start();
    const instanceId = config.instanceId ?? hostname();
    const backgroundJobs = new BackgroundJobService({
      db: viewTables<BackgroundJobTables>(database),
      durable,
      webhooks,
      store,
      clock,
      logger: logger.child({ component: 'background-jobs' }),
      instanceId,
    });
    const schedules = new ScheduleService({ db: viewTables<ScheduleTables>(database), durable, webhooks, store, clock, logger: logger.child({ component: 'schedules' }) });
    const webFetchCaches = new AgentCaches({ create: () => new WebFetchCache({ clock }), maxAgents: 256 });
    // Read once here; a bad file stops start-up (McpConfigError names the file and the path).
    const mcpConfig = config.mcpConfigFile === undefined ? EMPTY_MCP_CONFIG : await loadMcpConfig(config.mcpConfigFile);
    // Skills call MCP servers with mcporter from run_command, so the sandbox carries it.
    const mcporter = await locateMcporter();
    const sandbox = await detectCommandSandbox({
      bwrapPath: config.sandbox.bwrapPath,
      unsafeWithoutSandbox: config.sandbox.unsafeWithoutSandbox,
      allowNetwork: config.sandbox.allowNetwork,
      outputLimitBytes: config.sandbox.outputLimitBytes,
      logger,
      additions: {
        readOnlyBinds: [...config.sandbox.readOnlyPaths.map((folder) => ({ source: folder, target: folder })), ...(mcporter?.sandboxAdditions.readOnlyBinds ?? [])],
        commands: mcporter?.sandboxAdditions.commands ?? [],
      },
    });
    const services: ToolServices = {
      clock,
      todoStore: store,
      sandbox,
      commandSettings: { defaultTimeoutMs: config.sandbox.defaultTimeoutMs, maxTimeoutMs: config.sandbox.maxTimeoutMs },
      webFetch: {
        settings: config.web,
        cacheFor: (agentId) => webFetchCaches.get(agentId),
        ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
      },
      searchProvider: createSearchProvider({ settings: config.web.search }),
      mcp: new McpRegistry({
        config: mcpConfig,
        clock,
        logger: logger.child({ component: 'mcp' }),
        // A backstop only: the loop's own tool timeout cancels a call first and reports it as a timeout.
        settings: { callTimeoutMs: config.limits.toolTimeoutMs + 5_000 },
      }),
      skills: {
        catalog: config.skillsDir === undefined ? EMPTY_SKILL_CATALOG : await loadSkillCatalog({ folder: config.skillsDir, mcpConfig, logger: logger.child({ component: 'skills' }) }),
        mcporterCommand: mcporterCommand({ install: mcporter, sandbox }),
      },
      backgroundJobs,
      schedules,
    };
    const service = await TurnService.start({
      config,
      store,
      services,
      openAIClient: createSharedOpenAIClient({ config: config.model, logger }),
      logger,
      clock,
      newTurnId: options.newTurnId ?? (() => `turn_${randomUUID().replaceAll('-', '')}`),
      instanceId,
      sharedStore: config.databaseUrl !== undefined,
      turnWebhooks: createTurnWebhooks({ webhooks }),
    });
    const app = await buildApp({ config, logger, service, backgroundJobs, schedules });
    app.addHook('onClose', async () => {
      schedules.close();
      await backgroundJobs.close();
      await durableWork.stop();
      await services.mcp.close();
      await store.close();
    });
    await backgroundJobs.start({ turns: service });
    await schedules.start({ turns: service });
    return { app, service, store, durable: durableWork, webhooks, backgroundJobs, schedules };
  } catch (error) {
    await durable?.stop();
    await store.close();
    throw error;
  }
}
