import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * `2026-12-01-brain-001-pages`: each agent's pages, and the database's own full-text index
 * over them. Both index the same text, `toIndexText` of each field (Chinese and Japanese as
 * bigrams, see `search-terms.ts`):
 *
 * - SQLite: a contentless FTS5 table keyed by the page's rowid (the text lives once, in
 *   `brain_pages`), porter stemming for English, every term prefixed with its agent's key
 *   (see `SqliteBrainStore`);
 * - PostgreSQL: a weighted `tsvector` column (title A, tags B, content D, `english`
 *   configuration) with a GIN index. No extension is needed.
 */
export const brainPagesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    if (isPostgres(db)) {
      await sql`
        CREATE TABLE brain_pages (
          id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          agent_id TEXT NOT NULL,
          reference TEXT NOT NULL,
          title TEXT NOT NULL,
          content TEXT NOT NULL,
          tags_json TEXT NOT NULL,
          updated_at TEXT NOT NULL,
          search_vector TSVECTOR NOT NULL,
          CONSTRAINT brain_pages_agent_reference UNIQUE (agent_id, reference)
        )`.execute(db);
      await sql`CREATE INDEX brain_pages_search ON brain_pages USING GIN (search_vector)`.execute(db);
    } else {
      await sql`
        CREATE TABLE brain_pages (
          id INTEGER PRIMARY KEY,
          agent_id TEXT NOT NULL,
          reference TEXT NOT NULL,
          title TEXT NOT NULL,
          content TEXT NOT NULL,
          tags_json TEXT NOT NULL,
          updated_at TEXT NOT NULL,
          CONSTRAINT brain_pages_agent_reference UNIQUE (agent_id, reference)
        )`.execute(db);
      await sql`
        CREATE VIRTUAL TABLE brain_pages_fts USING fts5(
          title, tags, content,
          content = '', contentless_delete = 1,
          tokenize = 'porter unicode61 remove_diacritics 2'
        )`.execute(db);
    }
    await sql`CREATE INDEX brain_pages_agent_updated ON brain_pages (agent_id, updated_at)`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    if (!isPostgres(db)) await sql`DROP TABLE IF EXISTS brain_pages_fts`.execute(db);
    await sql`DROP TABLE IF EXISTS brain_pages`.execute(db);
  },
};

/** The store is PostgreSQL when Kysely speaks to it through the Postgres adapter. */
export function isPostgres<Tables>(db: Kysely<Tables>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
