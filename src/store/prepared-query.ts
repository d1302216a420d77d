import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import type { Database } from './database-schema.js';

/** Where one of a run's values goes, while the query is built once. */
class Slot {
  constructor(readonly name: string) {}
}

/**
 * A query that Kysely builds and compiles once, then runs with new values: for the store's
 * statements of fixed shape that every turn runs. Building and compiling them (a tree of frozen
 * nodes, then a visitor over it) cost more than SQLite takes to run them, and made much of a
 * turn's store garbage. `build` gets stand-ins for the values, by name: it must hand each one to
 * the query builder as a value, never look at it, and give the query one shape whatever the
 * values will be. The SQL is compiled by the first database the query runs on, so each store
 * keeps its own instances (a store is one dialect).
 */
export class PreparedQuery<V extends object, R> {
  readonly #build: (db: Kysely<Database>, values: V) => Compilable<R>;
  #compiled: { readonly sql: string; readonly parameters: readonly unknown[] } | undefined;

  constructor(build: (db: Kysely<Database>, values: V) => Compilable<R>) {
    this.#build = build;
  }

  async run(db: Kysely<Database>, values: V): Promise<QueryResult<R>> {
    const compiled = (this.#compiled ??= this.#compile(db, Object.keys(values)));
    const named = values as Record<string, unknown>;
    const parameters = compiled.parameters.map((parameter) => (parameter instanceof Slot ? named[parameter.name] : parameter));
    return await db.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters));
  }

  async first(db: Kysely<Database>, values: V): Promise<R | undefined> {
    return (await this.run(db, values)).rows[0];
  }

  #compile(db: Kysely<Database>, names: readonly string[]): { sql: string; parameters: readonly unknown[] } {
    const slots = Object.fromEntries(names.map((name) => [name, new Slot(name)])) as unknown as V;
    const { sql, parameters } = this.#build(db, slots).compile();
    const bound = new Set(parameters.filter((parameter): parameter is Slot => parameter instanceof Slot).map((slot) => slot.name));
    const unbound = names.filter((name) => !bound.has(name));
    if (unbound.length > 0) throw new Error(`a prepared query must bind every value as a parameter; ${unbound.join(', ')} not bound in: ${sql}`);
    return { sql, parameters };
  }
}
