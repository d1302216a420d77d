import type { Kysely } from 'kysely';
import { isPostgres } from './brain-pages-migration.js';
import type { BrainStore } from './brain-store.js';
import type { BrainTables } from './brain-tables.js';
import { PostgresBrainStore } from './postgres-brain-store.js';
import { SqliteBrainStore } from './sqlite-brain-store.js';

/** Pages one agent may keep unless the service says otherwise (`BRAIN_PAGES_PER_AGENT`). */
export const DEFAULT_BRAIN_PAGES_PER_AGENT = 10_000;

/** The Brain over the turn store's database, in that database's own dialect of full-text search; at most `maxPagesPerAgent` pages per agent. */
export function createBrainStore<Tables>(db: Kysely<Tables>, options: { readonly maxPagesPerAgent?: number } = {}): BrainStore {
  const maxPagesPerAgent = options.maxPagesPerAgent ?? DEFAULT_BRAIN_PAGES_PER_AGENT;
  // The same connection seen with the Brain's tables only; Kysely's types cannot narrow a
  // database type, so this view is a cast (the tables exist: the store's migrations made them).
  const brain = db as unknown as Kysely<BrainTables>;
  return isPostgres(brain) ? new PostgresBrainStore(brain, { maxPagesPerAgent }) : new SqliteBrainStore(brain, { maxPagesPerAgent });
}
