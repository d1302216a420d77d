import type { Kysely } from 'kysely';
import { isPostgres } from './brain-pages-migration.js';
import type { BrainStore } from './brain-store.js';
import type { BrainTables } from './brain-tables.js';
import { PostgresBrainStore } from './postgres-brain-store.js';
import { SqliteBrainStore } from './sqlite-brain-store.js';

/** The Brain over the turn store's database, in that database's own dialect of full-text search. */
export function createBrainStore<Tables>(db: Kysely<Tables>): BrainStore {
  // The same connection seen with the Brain's tables only; Kysely's types cannot narrow a
  // database type, so this view is a cast (the tables exist: the store's migrations made them).
  const brain = db as unknown as Kysely<BrainTables>;
  return isPostgres(brain) ? new PostgresBrainStore(brain) : new SqliteBrainStore(brain);
}
