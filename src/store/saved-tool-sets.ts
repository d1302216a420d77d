import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './database-schema.js';

/** Tool sets remembered; past this many the memory starts over (each is kilobytes of JSON). */
const MAX_REMEMBERED = 256;

/**
 * The tool sets this process has seen committed to the store. A turn stores the tools it was
 * given as a hash into `tool_sets`; nearly every turn of a deployment has one of a handful of
 * sets, and the insert of an existing one (kilobytes bound and looked up, to do nothing) was a
 * visible share of a turn's store cost. Rows of `tool_sets` are never deleted, so a set once
 * committed stays; a set written in a transaction is remembered only once it has committed.
 */
export class SavedToolSets {
  readonly #hashes = new Map<string, string>();

  /** A writer for one transaction; call `committed()` after the transaction has committed. */
  writer(): ToolSetWriter {
    return new ToolSetWriter(this.#hashes);
  }
}

export class ToolSetWriter {
  readonly #saved: Map<string, string>;
  readonly #written = new Map<string, string>();

  constructor(saved: Map<string, string>) {
    this.#saved = saved;
  }

  /** Stores the set (unless it is known to be stored) and returns its hash. */
  async save(trx: Kysely<Database>, json: string): Promise<string> {
    const known = this.#saved.get(json) ?? this.#written.get(json);
    if (known !== undefined) return known;
    const hash = createHash('sha256').update(json).digest('hex');
    await trx
      .insertInto('tool_sets')
      .values({ hash, json })
      .onConflict((conflict) => conflict.column('hash').doNothing())
      .execute();
    this.#written.set(json, hash);
    return hash;
  }

  /** The transaction committed: its sets are stored for good. */
  committed(): void {
    for (const [json, hash] of this.#written) {
      if (this.#saved.size >= MAX_REMEMBERED) this.#saved.clear();
      this.#saved.set(json, hash);
    }
  }
}
