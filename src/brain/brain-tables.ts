import type { Generated } from 'kysely';

/** The Brain's tables as Kysely sees them (added to the store's `Database` with `withTables`). */
// A type alias, not an interface: Kysely's `withTables` wants a record type.
export type BrainTables = {
  brain_pages: BrainPagesTable;
};

export interface BrainPagesTable {
  id: Generated<number>;
  agent_id: string;
  reference: string;
  title: string;
  content: string;
  tags_json: string;
  updated_at: string;
}
