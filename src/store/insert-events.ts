import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database-schema.js';
import type { StoredEvent } from './turn-record.js';

/**
 * Rows per INSERT statement. Each row binds 4 parameters; SQLite allows 32,766 per statement
 * and PostgreSQL 65,535, so one statement for a long answer's 8,192+ events would fail.
 */
export const EVENT_ROWS_PER_INSERT = 1_000;

/** Inserts events in statements of at most EVENT_ROWS_PER_INSERT rows; atomic only inside a transaction. */
export async function insertEvents(db: Kysely<Database> | Transaction<Database>, turnId: string, events: readonly StoredEvent[]): Promise<void> {
  for (let start = 0; start < events.length; start += EVENT_ROWS_PER_INSERT) {
    await db
      .insertInto('turn_events')
      .values(events.slice(start, start + EVENT_ROWS_PER_INSERT).map((event) => ({ turn_id: turnId, seq: event.seq, type: event.type, body: event.json })))
      .execute();
  }
}
