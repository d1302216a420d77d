import type { Kysely } from 'kysely';
import type { StoreDatabase } from './open-turn-store.js';

/**
 * The store's connection seen with only the tables one part of the service keeps there
 * (durable jobs, webhook attempts, workflow runs). Kysely's database types are invariant, so
 * this is a cast, in one place; the tables themselves come from the store's migrations.
 */
export function viewTables<Tables>(database: StoreDatabase): Kysely<Tables> {
  return database.db as unknown as Kysely<Tables>;
}
