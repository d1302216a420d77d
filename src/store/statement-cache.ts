import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * A SQLite database whose prepared statements are reused by SQL text. Kysely prepares every
 * query afresh; the store runs the same few statements for every event batch, and preparing
 * was a visible share of each turn's CPU. Bounded, least recently used out first.
 */
export function withStatementCache(database: SqliteDatabase, maxStatements = 256): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare: (sql) => {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = database.prepare(sql);
        if (statements.size >= maxStatements) {
          const oldest = statements.keys().next();
          if (oldest.done !== true) statements.delete(oldest.value);
        }
      } else {
        statements.delete(sql);
      }
      statements.set(sql, statement);
      return statement;
    },
  };
}
