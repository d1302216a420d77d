import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { StoreDatabase } from '../store/open-turn-store.js';
import { viewTables } from '../store/view-tables.js';
import type { DurableJobsDatabase } from './durable-jobs-table.js';
import type { DurableWork } from './durable-work.js';
import { PgBossDurableWork } from './pg-boss-durable-work.js';
import { SqliteDurableWork } from './sqlite-durable-work.js';

/** pg-boss's schema beside the store's: `pgboss_v12` next to `public`, `<schema>_pgboss_v12` next to any other. */
export function pgBossSchemaFor(storeSchema: string | undefined): string {
  return `${pgBoss10SchemaFor(storeSchema)}_v12`;
}

/** Where pg-boss 10 kept its tables (`pgboss`, `<schema>_pgboss`): waiting jobs found there are moved over. */
export function pgBoss10SchemaFor(storeSchema: string | undefined): string {
  return storeSchema === undefined || storeSchema === 'public' ? 'pgboss' : `${storeSchema}_pgboss`;
}

/**
 * Durable work for the store the service runs on: pg-boss when it is PostgreSQL (in its own
 * schema beside the store's), the in-process runner over the SQLite file otherwise.
 */
export async function openDurableWork(options: {
  readonly database: StoreDatabase;
  readonly databaseUrl: string | undefined;
  readonly superviseSeconds: number;
  readonly leaseSeconds: number;
  /** Days finished jobs are kept (`RETENTION_DAYS`; 0 keeps them all). */
  readonly retentionDays: number;
  readonly clock: Clock;
  readonly logger: Logger;
}): Promise<DurableWork> {
  const { database, logger } = options;
  if (database.dialect === 'postgres' && options.databaseUrl !== undefined) {
    return PgBossDurableWork.open({
      connectionString: options.databaseUrl,
      schema: pgBossSchemaFor(database.schema),
      legacySchema: pgBoss10SchemaFor(database.schema),
      superviseSeconds: options.superviseSeconds,
      leaseSeconds: options.leaseSeconds,
      retentionDays: options.retentionDays,
      logger,
    });
  }
  return SqliteDurableWork.open({ db: viewTables<DurableJobsDatabase>(database), leaseSeconds: options.leaseSeconds, clock: options.clock, logger });
}
