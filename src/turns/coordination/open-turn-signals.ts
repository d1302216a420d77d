import type { Logger } from 'pino';
import { LocalTurnSignals } from './local-turn-signals.js';
import { PostgresTurnSignals } from './postgres-turn-signals.js';
import type { TurnSignals } from './turn-signals.js';

/** LISTEN/NOTIFY when replicas share PostgreSQL; in-process signals for the single SQLite process. */
export async function openTurnSignals(options: { readonly databaseUrl: string | undefined; readonly logger: Logger }): Promise<TurnSignals> {
  if (options.databaseUrl === undefined) return new LocalTurnSignals();
  return PostgresTurnSignals.connect({ connectionString: options.databaseUrl, logger: options.logger.child({ component: 'signals' }) });
}
