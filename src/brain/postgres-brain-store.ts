import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { brainFull } from './brain-errors.js';
import type { BrainPage, BrainPageInput, BrainSearchHit } from './brain-page.js';
import { selectBrainPage, toBrainPage, type BrainPageRow } from './brain-page-row.js';
import type { BrainStore } from './brain-store.js';
import type { BrainTables } from './brain-tables.js';
import { isSingleCjkCharacter, toIndexText, type SearchQuery } from './search-terms.js';

/**
 * The Brain on PostgreSQL: pages in `brain_pages` with a weighted `tsvector` (title A, tags B,
 * content D) under a GIN index, written in the same statement as the row. Ranked by
 * `ts_rank` with length normalisation (rank / (1 + log(length))).
 */
export class PostgresBrainStore implements BrainStore {
  readonly #db: Kysely<BrainTables>;
  readonly #maxPages: number;

  constructor(db: Kysely<BrainTables>, options: { readonly maxPagesPerAgent: number }) {
    this.#db = db;
    this.#maxPages = options.maxPagesPerAgent;
  }

  /**
   * Runs `write` once the agent has room for a page under `reference` (it has one by that
   * reference already, or fewer than the cap); `brain_full` otherwise. The agent's advisory lock
   * makes concurrent creates count one after another, so replicas cannot pass the cap between them.
   */
  async #withRoom<T>(agentId: string, reference: string, write: (trx: Transaction<BrainTables>) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`brain-pages:${agentId}`}, 0))`.execute(trx);
      const existing = await trx.selectFrom('brain_pages').select('id').where('agent_id', '=', agentId).where('reference', '=', reference).executeTakeFirst();
      if (existing === undefined) {
        const row = await trx.selectFrom('brain_pages').select((eb) => eb.fn.countAll<string>().as('count')).where('agent_id', '=', agentId).executeTakeFirst();
        if (Number(row?.count ?? 0) >= this.#maxPages) throw brainFull(this.#maxPages);
      }
      return write(trx);
    });
  }

  async putPage(options: { agentId: string; page: BrainPageInput; now: string }): Promise<{ page: BrainPage; created: boolean }> {
    const { agentId, page, now } = options;
    // `xmax = 0` holds for a freshly inserted row and not for one the conflict branch updated:
    // one atomic statement says which it was, even with concurrent writers.
    const { rows } = await this.#withRoom(agentId, page.reference, (trx) =>
      sql<{ created: boolean }>`
      INSERT INTO brain_pages (agent_id, reference, title, content, tags_json, updated_at, search_vector)
      VALUES (${agentId}, ${page.reference}, ${page.title}, ${page.content}, ${JSON.stringify(page.tags)}, ${now}, ${searchVector(page)})
      ON CONFLICT (agent_id, reference) DO UPDATE SET
        title = EXCLUDED.title, content = EXCLUDED.content, tags_json = EXCLUDED.tags_json,
        updated_at = EXCLUDED.updated_at, search_vector = EXCLUDED.search_vector
      RETURNING (xmax = 0) AS created`.execute(trx),
    );
    return { page: { ...page, updatedAt: now }, created: rows[0]?.created === true };
  }

  async createPage(options: { agentId: string; page: BrainPageInput; now: string }): Promise<BrainPage | undefined> {
    const { agentId, page, now } = options;
    const { rows } = await this.#withRoom(agentId, page.reference, (trx) =>
      sql<{ reference: string }>`
      INSERT INTO brain_pages (agent_id, reference, title, content, tags_json, updated_at, search_vector)
      VALUES (${agentId}, ${page.reference}, ${page.title}, ${page.content}, ${JSON.stringify(page.tags)}, ${now}, ${searchVector(page)})
      ON CONFLICT (agent_id, reference) DO NOTHING
      RETURNING reference`.execute(trx),
    );
    return rows.length === 0 ? undefined : { ...page, updatedAt: now };
  }

  getPage(options: { agentId: string; reference: string }): Promise<BrainPage | undefined> {
    return selectBrainPage(this.#db, options);
  }

  async deletePage(options: { agentId: string; reference: string }): Promise<boolean> {
    const result = await this.#db.deleteFrom('brain_pages').where('agent_id', '=', options.agentId).where('reference', '=', options.reference).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async searchPages(options: { agentId: string; query: SearchQuery; limit: number }): Promise<BrainSearchHit[]> {
    const { terms, phrases } = options.query;
    if (terms.length === 0) return [];
    const query = terms.map((term) => (isSingleCjkCharacter(term) ? `${quote(term)}:*` : quote(term))).join(' | ');
    // ts_rank has no inverse document frequency, so a stray bigram in a title can outrank the
    // page that holds the whole word; each phrase (a whole CJK run) a page holds adds a bonus.
    const bonus =
      phrases.length === 0
        ? sql`0`
        : sql.join(
            phrases.map((phrase) => sql`(CASE WHEN search_vector @@ to_tsquery('english', ${phrase.map(quote).join(' <-> ')}) THEN ${PHRASE_BONUS} ELSE 0 END)`),
            sql` + `,
          );
    const { rows } = await sql<BrainPageRow & { score: number }>`
      SELECT reference, title, content, tags_json, updated_at, ts_rank('{0.1, 0.2, 0.4, 1.0}', search_vector, query, 1) + ${bonus} AS score
      FROM brain_pages, to_tsquery('english', ${query}) AS query
      WHERE agent_id = ${options.agentId} AND search_vector @@ query
      ORDER BY score DESC, updated_at DESC
      LIMIT ${options.limit}`.execute(this.#db);
    return rows.map((row) => ({ page: toBrainPage(row), score: row.score }));
  }

  async listPages(options: { agentId: string; limit: number }): Promise<BrainPage[]> {
    const rows = await this.#db
      .selectFrom('brain_pages')
      .select(['reference', 'title', 'content', 'tags_json', 'updated_at'])
      .where('agent_id', '=', options.agentId)
      .orderBy('updated_at', 'desc')
      .orderBy('reference')
      .limit(options.limit)
      .execute();
    return rows.map(toBrainPage);
  }
}

/** What one matching phrase adds to a ts_rank score (which runs from 0 to about 1). */
const PHRASE_BONUS = sql.lit(0.5);

function searchVector(page: BrainPageInput): RawBuilder<unknown> {
  return sql`setweight(to_tsvector('english', ${toIndexText(page.title)}), 'A')
    || setweight(to_tsvector('english', ${toIndexText(page.tags.join(' '))}), 'B')
    || setweight(to_tsvector('english', ${toIndexText(page.content)}), 'D')`;
}

/** A tsquery lexeme: single quotes doubled, backslashes escaped. */
function quote(term: string): string {
  return `'${term.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}
