/**
 * Measures how well each way of full-text indexing finds the pages of a small mixed English /
 * Chinese / Japanese corpus (`test/support/brain-corpus.ts`): recall@1, @3, @5 and MRR, in
 * total and per language. The options are the ones one would reach for on each database; the
 * two marked "(store)" run through the Brain's real stores, so their figures are the
 * service's own. `npx tsx bench/brain-recall-bench.ts` (needs the PostgreSQL of the tests).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import pg from 'pg';
import { estimateTokens } from '../src/brain/estimate-tokens.js';
import { recallPages } from '../src/brain/recall-pages.js';
import { toIndexText, toSearchQuery, toSearchTerms } from '../src/brain/search-terms.js';
import { openTurnStore } from '../src/store/open-turn-store.js';
import { BRAIN_CORPUS, BRAIN_QUERIES, type CorpusQuery } from '../test/support/brain-corpus.js';
import { createPostgresSchema } from '../test/support/postgres-schema.js';

type Search = (query: string) => Promise<string[]>;

interface Option {
  readonly name: string;
  readonly search: Search;
}

const AGENT = 'bench';
const NOW = '2026-12-01T00:00:00.000Z';

export async function runBrainRecallBench(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'brain-bench-'));
  const schema = await createPostgresSchema();
  const client = new pg.Client({ connectionString: schema.url });
  await client.connect();
  const sqlite = new BetterSqlite3(':memory:');
  try {
    const options: Option[] = [...sqliteOptions(sqlite), ...(await postgresOptions(client, schema.name))];
    const store = await openTurnStore({ databaseUrl: undefined, dataDir });
    const pgStore = await schema.whileSchemasAreStable(() => openTurnStore({ databaseUrl: schema.url, dataDir }));
    try {
      for (const [name, turnStore] of [['SQLite FTS5, bigrams, any term + CJK phrases (store)', store], ['PostgreSQL tsvector, bigrams, any term + CJK phrases (store)', pgStore]] as const) {
        for (const page of BRAIN_CORPUS) await turnStore.brain.putPage({ agentId: AGENT, page, now: NOW });
        options.push({
          name,
          search: async (query) => (await turnStore.brain.searchPages({ agentId: AGENT, query: toSearchQuery(query), limit: 10 })).map((hit) => hit.page.reference),
        });
      }
      process.stdout.write(`\nBrain recall on ${BRAIN_CORPUS.length} pages, ${BRAIN_QUERIES.length} queries (${countBy('en')} English, ${countBy('zh')} Chinese, ${countBy('ja')} Japanese, ${countBy('mixed')} mixed)\n\n`);
      process.stdout.write('| option | recall@1 | recall@3 | recall@5 | MRR | en @3 | zh @3 | ja @3 | mixed @3 | median ms/query |\n|---|---|---|---|---|---|---|---|---|---|\n');
      for (const option of options) process.stdout.write(`${await measure(option)}\n`);
      await measureTokenEstimates(store.brain);
    } finally {
      await store.close();
      await pgStore.close();
    }
  } finally {
    sqlite.close();
    await client.end();
    await schema.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * How `estimateTokens` compares with two real OpenAI encodings, on the corpus pages and on
 * recall answers: the ratio estimate / real over all texts (above 1: the estimate errs high,
 * so budgets hold), and how many single texts it underestimated.
 */
async function measureTokenEstimates(brain: Parameters<typeof recallPages>[0]['store']): Promise<void> {
  const answers: { language: string; text: string }[] = [];
  for (const { query, language } of BRAIN_QUERIES) answers.push({ language, text: (await recallPages({ store: brain, agentId: AGENT, query, budgetTokens: 400 })).text });
  const pageLanguage = (reference: string) => (reference.endsWith('-zh') ? 'zh' : reference.endsWith('-ja') ? 'ja' : reference.endsWith('-mixed') ? 'mixed' : 'en');
  const texts = [
    ...BRAIN_CORPUS.map((page) => ({ kind: 'page', language: pageLanguage(page.reference), text: `${page.title}\n${page.content}` })),
    ...answers.map((answer) => ({ kind: 'recall answer', ...answer })),
  ];
  process.stdout.write('\nToken estimates against real encodings (estimate / real, summed; texts underestimated)\n\n| texts | language | n | vs o200k | under o200k | vs cl100k | under cl100k |\n|---|---|---|---|---|---|---|\n');
  for (const kind of ['page', 'recall answer']) {
    for (const language of ['en', 'zh', 'ja', 'mixed']) {
      const group = texts.filter((text) => text.kind === kind && text.language === language);
      if (group.length === 0) continue;
      const estimated = group.map((text) => estimateTokens(text.text));
      const row = [encodeO200k, encodeCl100k].map((encode) => {
        const real = group.map((text) => encode(text.text).length);
        const ratio = estimated.reduce((a, b) => a + b, 0) / real.reduce((a, b) => a + b, 0);
        const under = estimated.filter((value, index) => value < (real[index] ?? 0)).length;
        return `${ratio.toFixed(2)} | ${under}`;
      });
      process.stdout.write(`| ${kind} | ${language} | ${group.length} | ${row.join(' | ')} |\n`);
    }
  }
}

function countBy(language: CorpusQuery['language']): number {
  return BRAIN_QUERIES.filter((query) => query.language === language).length;
}

async function measure(option: Option): Promise<string> {
  const recallAt = { 1: 0, 3: 0, 5: 0 };
  const byLanguage = new Map<string, { sum: number; count: number }>();
  let reciprocal = 0;
  const times: number[] = [];
  for (const { query, relevant, language } of BRAIN_QUERIES) {
    const started = performance.now();
    const found = await option.search(query);
    times.push(performance.now() - started);
    for (const k of [1, 3, 5] as const) recallAt[k] += relevant.filter((reference) => found.slice(0, k).includes(reference)).length / relevant.length;
    const rank = found.findIndex((reference) => relevant.includes(reference));
    reciprocal += rank < 0 ? 0 : 1 / (rank + 1);
    const entry = byLanguage.get(language) ?? { sum: 0, count: 0 };
    entry.sum += relevant.filter((reference) => found.slice(0, 3).includes(reference)).length / relevant.length;
    entry.count += 1;
    byLanguage.set(language, entry);
  }
  const n = BRAIN_QUERIES.length;
  const share = (value: number) => value.toFixed(2);
  const language = (name: string) => {
    const entry = byLanguage.get(name);
    return entry === undefined ? '–' : share(entry.sum / entry.count);
  };
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? 0;
  return `| ${option.name} | ${share(recallAt[1] / n)} | ${share(recallAt[3] / n)} | ${share(recallAt[5] / n)} | ${share(reciprocal / n)} | ${language('en')} | ${language('zh')} | ${language('ja')} | ${language('mixed')} | ${median.toFixed(2)} |`;
}

/** FTS5 over the raw text with its own tokenizers, and over bigram text without phrases. */
function sqliteOptions(db: BetterSqlite3.Database): Option[] {
  const fts = (table: string, tokenize: string, indexText: (text: string) => string) => {
    db.exec(`CREATE VIRTUAL TABLE ${table} USING fts5(reference UNINDEXED, title, tags, content, tokenize = '${tokenize}')`);
    const insert = db.prepare(`INSERT INTO ${table} (reference, title, tags, content) VALUES (?, ?, ?, ?)`);
    for (const page of BRAIN_CORPUS) insert.run(page.reference, indexText(page.title), indexText(page.tags.join(' ')), indexText(page.content));
    const select = db.prepare(`SELECT reference FROM ${table} WHERE ${table} MATCH ? ORDER BY bm25(${table}, 5.0, 3.0, 1.0) LIMIT 10`);
    return (match: string): string[] => {
      if (match === '') return [];
      try {
        return select.all(match).map((row) => (row as { reference: string }).reference);
      } catch {
        return [];
      }
    };
  };
  const quote = (text: string) => `"${text.replaceAll('"', '""')}"`;
  const words = (query: string) => query.split(/\s+/).filter((word) => word !== '');
  const raw = (text: string) => text;
  const unicode = fts('raw_unicode', 'porter unicode61 remove_diacritics 2', raw);
  const trigram = fts('raw_trigram', 'trigram', raw);
  const bigrams = fts('bigrams', 'porter unicode61 remove_diacritics 2', toIndexText);
  return [
    { name: 'SQLite FTS5 unicode61 (porter), raw text, any word', search: (query) => Promise.resolve(unicode(words(query).map(quote).join(' OR '))) },
    { name: 'SQLite FTS5 trigram, raw text, any word', search: (query) => Promise.resolve(trigram(words(query).map(quote).join(' OR '))) },
    { name: 'SQLite FTS5 trigram, raw text, any 3-character piece', search: (query) => Promise.resolve(trigram(trigramPieces(query).map(quote).join(' OR '))) },
    { name: 'SQLite FTS5, bigrams, every term', search: (query) => Promise.resolve(bigrams(toSearchTerms(query).map(quote).join(' AND '))) },
    { name: 'SQLite FTS5, bigrams, any term', search: (query) => Promise.resolve(bigrams(toSearchTerms(query).map(quote).join(' OR '))) },
  ];
}

/** Every run of three characters of each word: what a trigram index can match at all. */
function trigramPieces(query: string): string[] {
  const pieces = new Set<string>();
  for (const word of query.split(/\s+/)) {
    const characters = Array.from(word);
    if (characters.length <= 3 && characters.length > 0) pieces.add(word);
    for (let index = 0; index + 3 <= characters.length; index += 1) pieces.add(characters.slice(index, index + 3).join(''));
  }
  return [...pieces];
}

async function postgresOptions(client: pg.Client, schemaName: string): Promise<Option[]> {
  await client.query(`CREATE TABLE raw_pages (reference TEXT, body TEXT, vector TSVECTOR, bigrams TSVECTOR)`);
  for (const page of BRAIN_CORPUS) {
    const body = `${page.title} ${page.tags.join(' ')} ${page.content}`;
    await client.query(
      `INSERT INTO raw_pages VALUES ($1, $2,
        setweight(to_tsvector('english', $3), 'A') || setweight(to_tsvector('english', $4), 'B') || setweight(to_tsvector('english', $5), 'D'),
        setweight(to_tsvector('english', $6), 'A') || setweight(to_tsvector('english', $7), 'B') || setweight(to_tsvector('english', $8), 'D'))`,
      [page.reference, body, page.title, page.tags.join(' '), page.content, toIndexText(page.title), toIndexText(page.tags.join(' ')), toIndexText(page.content)],
    );
  }
  const references = async (text: string, values: unknown[]) => (await client.query<{ reference: string }>(text, values)).rows.map((row) => row.reference);
  const options: Option[] = [
    {
      name: 'PostgreSQL tsvector (english), raw text, any word',
      search: (query) =>
        references(
          `WITH query AS (SELECT replace(plainto_tsquery('english', $1)::text, '&', '|')::tsquery AS q)
           SELECT reference FROM raw_pages, query WHERE vector @@ q ORDER BY ts_rank('{0.1,0.2,0.4,1.0}', vector, q, 1) DESC LIMIT 10`,
          [query],
        ),
    },
    {
      name: 'PostgreSQL tsvector, bigrams, any term (no phrases)',
      search: (query) => {
        const terms = toSearchTerms(query).map((term) => `'${term.replaceAll("'", "''")}'`);
        if (terms.length === 0) return Promise.resolve([]);
        return references(
          `SELECT reference FROM raw_pages, to_tsquery('english', $1) AS q WHERE bigrams @@ q ORDER BY ts_rank('{0.1,0.2,0.4,1.0}', bigrams, q, 1) DESC LIMIT 10`,
          [terms.join(' | ')],
        );
      },
    },
  ];
  // pg_trgm is one extension per database: made in this bench's own schema, dropped with it.
  try {
    await client.query(`CREATE EXTENSION pg_trgm SCHEMA "${schemaName}"`);
    process.stdout.write(`pg_trgm: CREATE EXTENSION works in the fresh schema ${schemaName}\n`);
    await client.query('CREATE INDEX raw_pages_trgm ON raw_pages USING GIN (body gin_trgm_ops)');
    options.push(
      {
        name: 'PostgreSQL pg_trgm, word_similarity ≥ 0.3',
        search: (query) =>
          references(`SELECT reference FROM raw_pages WHERE word_similarity($1, body) >= 0.3 ORDER BY word_similarity($1, body) DESC LIMIT 10`, [query]),
      },
      {
        name: 'PostgreSQL pg_trgm, ILIKE any word, by similarity',
        search: (query) =>
          references(`SELECT reference FROM raw_pages WHERE body ILIKE ANY ($2::text[]) ORDER BY word_similarity($1, body) DESC LIMIT 10`, [
            query,
            query.split(/\s+/).filter((word) => word !== '').map((word) => `%${word.replaceAll(/[\\%_]/g, (c) => `\\${c}`)}%`),
          ]),
      },
    );
  } catch (error) {
    process.stdout.write(`pg_trgm: not measured, CREATE EXTENSION failed: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  return options;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runBrainRecallBench();
}
