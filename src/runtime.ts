import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { buildApp, type App } from './app.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/config.js';
import { openTurnStore } from './store/open-turn-store.js';
import type { TurnStore } from './store/turn-store.js';
import { createSearchProvider } from './tools/web/search/create-search-provider.js';
import type { ToolServices } from './turns/assembly/tool-services.js';
import { TurnService } from './turns/turn-service.js';

export interface Runtime {
  readonly app: App;
  readonly service: TurnService;
  readonly store: TurnStore;
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
}): Promise<Runtime> {
  const { config, logger } = options;
  const store = await openTurnStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const services: ToolServices = {
      todoStore: store,
      searchProvider: createSearchProvider({ settings: config.web.search }),
    };
    const service = await TurnService.start({
      config,
      store,
      services,
      logger,
      clock: options.clock ?? systemClock,
      newTurnId: options.newTurnId ?? (() => `turn_${randomUUID().replaceAll('-', '')}`),
      instanceId: config.instanceId ?? hostname(),
      sharedStore: config.databaseUrl !== undefined,
    });
    const app = await buildApp({ config, logger, service });
    app.addHook('onClose', async () => {
      await store.close();
    });
    return { app, service, store };
  } catch (error) {
    await store.close();
    throw error;
  }
}
