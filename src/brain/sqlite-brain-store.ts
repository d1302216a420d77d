import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { brainFull } from './brain-errors.js';
import type { BrainPage, BrainPageInput, BrainSearchHit } from './brain-page.js';
import { selectBrainPage, toBrainPage, type BrainPageRow } from './brain-page-row.js';
import type { BrainStore } from './brain-store.js';
import type { BrainTables } from './brain-tables.js';
import { tokenizeSearchText } from '../text/tokenize-search-text.js';
import { isSingleCjkCharacter, type SearchQuery } from './search-terms.js';

/** Column weights for FTS5's bm25: title, tags, content. */
const BM25_WEIGHTS = sql.raw('5.0, 3.0, 1.0');

/**
 * The Brain on SQLite: pages in `brain_pages`, their terms in the contentless FTS5 table
 * `brain_pages_fts` under the same rowid, written in one transaction. Ranked by FTS5's bm25.
 *
 * Every indexed term carries its agent's key (`a1b2…价格`): each agent has a vocabulary of
 * its own, so a search walks only that agent's postings, and bm25's document frequencies —
 * which FTS5 counts over the whole table — are that agent's alone: another agent's pages do
 * not weigh in (only the table's total row count, in every term's IDF alike, is shared).
 */
export class SqliteBrainStore implements BrainStore {
  readonly #db: Kysely<BrainTables>;
  readonly #maxPages: number;

  constructor(db: Kysely<BrainTables>, options: { readonly maxPagesPerAgent: number }) {
    this.#db = db;
    this.#maxPages = options.maxPagesPerAgent;
  }

  /** Refuses one more page past the cap; SQLite writes one transaction at a time, so the count holds until the insert. */
  async #checkRoom(trx: Transaction<BrainTables>, agentId: string): Promise<void> {
    const row = await trx.selectFrom('brain_pages').select((eb) => eb.fn.countAll<number>().as('count')).where('agent_id', '=', agentId).executeTakeFirst();
    if ((row?.count ?? 0) >= this.#maxPages) throw brainFull(this.#maxPages);
  }

  async putPage(options: { agentId: string; page: BrainPageInput; now: string }): Promise<{ page: BrainPage; created: boolean }> {
    const { agentId, page, now } = options;
    return this.#db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('brain_pages').select('id').where('agent_id', '=', agentId).where('reference', '=', page.reference).executeTakeFirst();
      if (existing === undefined) {
        await this.#checkRoom(trx, agentId);
        await insertPage(trx, agentId, page, now);
        return { page: { ...page, updatedAt: now }, created: true };
      }
      await trx
        .updateTable('brain_pages')
        .set({ title: page.title, content: page.content, tags_json: JSON.stringify(page.tags), updated_at: now })
        .where('id', '=', existing.id)
        .execute();
      await sql`DELETE FROM brain_pages_fts WHERE rowid = ${existing.id}`.execute(trx);
      await indexPage(trx, existing.id, agentId, page);
      return { page: { ...page, updatedAt: now }, created: false };
    });
  }

  async createPage(options: { agentId: string; page: BrainPageInput; now: string }): Promise<BrainPage | undefined> {
    const { agentId, page, now } = options;
    return this.#db.transaction().execute(async (trx) => {
      await this.#checkRoom(trx, agentId);
      const inserted = await insertPage(trx, agentId, page, now);
      return inserted ? { ...page, updatedAt: now } : undefined;
    });
  }

  getPage(options: { agentId: string; reference: string }): Promise<BrainPage | undefined> {
    return selectBrainPage(this.#db, options);
  }

  async deletePage(options: { agentId: string; reference: string }): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const row = await trx.deleteFrom('brain_pages').where('agent_id', '=', options.agentId).where('reference', '=', options.reference).returning('id').executeTakeFirst();
      if (row === undefined) return false;
      await sql`DELETE FROM brain_pages_fts WHERE rowid = ${row.id}`.execute(trx);
      return true;
    });
  }

  async searchPages(options: { agentId: string; query: SearchQuery; limit: number }): Promise<BrainSearchHit[]> {
    const { terms, phrases } = options.query;
    if (terms.length === 0) return [];
    // A phrase is one more OR'ed item: bm25 adds its (rare, so heavy) weight to the pages that hold it.
    const key = agentIndexKey(options.agentId);
    const items = [
      ...phrases.map((phrase) => quote(phrase.map((term) => key + term).join(' '))),
      ...terms.map((term) => (isSingleCjkCharacter(term) ? `${quote(key + term)}*` : quote(key + term))),
    ];
    const match = items.join(' OR ');
    // The join's agent_id check is what guarantees isolation; the key makes the index agent-specific.
    const { rows } = await sql<BrainPageRow & { rank: number }>`
      SELECT p.reference, p.title, p.content, p.tags_json, p.updated_at, bm25(brain_pages_fts, ${BM25_WEIGHTS}) AS rank
      FROM brain_pages_fts JOIN brain_pages p ON p.id = brain_pages_fts.rowid
      WHERE brain_pages_fts MATCH ${match} AND p.agent_id = ${options.agentId}
      ORDER BY rank, p.updated_at DESC
      LIMIT ${options.limit}`.execute(this.#db);
    // bm25 is lower-is-better and negative; the API's score is higher-is-better.
    return rows.map((row) => ({ page: toBrainPage(row), score: -row.rank }));
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

/** Inserts the row and its index entry; false when the reference is taken. */
async function insertPage(trx: Transaction<BrainTables>, agentId: string, page: BrainPageInput, now: string): Promise<boolean> {
  const row = await trx
    .insertInto('brain_pages')
    .values({ agent_id: agentId, reference: page.reference, title: page.title, content: page.content, tags_json: JSON.stringify(page.tags), updated_at: now })
    .onConflict((conflict) => conflict.columns(['agent_id', 'reference']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (row === undefined) return false;
  await indexPage(trx, row.id, agentId, page);
  return true;
}

async function indexPage(trx: Transaction<BrainTables>, id: number, agentId: string, page: BrainPageInput): Promise<void> {
  await sql`
    INSERT INTO brain_pages_fts (rowid, title, tags, content)
    VALUES (${id}, ${agentTerms(agentId, page.title)}, ${agentTerms(agentId, page.tags.join(' '))}, ${agentTerms(agentId, page.content)})`.execute(trx);
}

/** The field's search terms (see `toIndexText`), each prefixed with the agent's key. */
function agentTerms(agentId: string, text: string): string {
  const key = agentIndexKey(agentId);
  return tokenizeSearchText(text)
    .map((term) => key + term)
    .join(' ');
}

/**
 * The agent's prefix for index terms: 12 hex digits of its id's hash between letters, so the
 * tokenizer keeps prefix and term as one token (agent ids hold `-` and `.`, which it splits on).
 */
function agentIndexKey(agentId: string): string {
  return `a${createHash('sha256').update(agentId).digest('hex').slice(0, 12)}z`;
}

/** An FTS5 string: double quotes doubled. */
function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}
