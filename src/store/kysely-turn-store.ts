import { createHash } from 'node:crypto';
import { Migrator, type Kysely, type Transaction } from 'kysely';
import type { TodoItem } from '../tools/todo/todo-store.js';
import type { TurnError, TurnEvent, TurnKind } from '../turns/turn-events.js';
import type { Database } from './database-schema.js';
import { migrations } from './migrations.js';
import type { NewTurn, StoredEvent, StoredTask, TurnFinish, TurnRecord, TurnStatus, TurnStore, TurnToolsRecord } from './turn-store.js';

/** The turn store over Kysely: one implementation for SQLite and PostgreSQL. */
export class KyselyTurnStore implements TurnStore {
  readonly #db: Kysely<Database>;

  private constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Opens the store and brings its schema up to date. On PostgreSQL, pass the schema the store
   * lives in: without one, Kysely takes a migration table in any schema for its own.
   */
  static async open(db: Kysely<Database>, options: { readonly migrationTableSchema?: string } = {}): Promise<KyselyTurnStore> {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(migrations) },
      ...(options.migrationTableSchema === undefined ? {} : { migrationTableSchema: options.migrationTableSchema }),
    });
    const { error } = await migrator.migrateToLatest();
    if (error !== undefined) {
      await db.destroy();
      throw new Error(`the turn store could not be migrated: ${error instanceof Error ? error.message : 'unknown error'}`, { cause: error });
    }
    return new KyselyTurnStore(db);
  }

  async createTurn(turn: NewTurn): Promise<void> {
    const { record } = turn;
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .insertInto('turns')
        .values({
          id: record.id,
          agent_id: record.agentId,
          kind: record.kind,
          status: record.status,
          model: record.model,
          created_at: record.createdAt,
          finished_at: null,
          iterations: 0,
          output: null,
          result_json: null,
          error_json: null,
          outcome: null,
          input_tokens: 0,
          output_tokens: 0,
          owner: turn.owner,
          heartbeat_at: record.createdAt,
          task_json: turn.task === undefined ? null : JSON.stringify(turn.task),
          background_job_id: record.backgroundJobId ?? null,
          schedule_id: record.scheduleId ?? null,
        })
        .execute();
      const toolsHash = await saveToolSet(trx, turn.toolsJson);
      const providerHash = await saveToolSet(trx, turn.providerToolsJson);
      await trx.insertInto('turn_tools').values({ turn_id: record.id, tools_hash: toolsHash, unavailable_json: turn.unavailableJson }).execute();
      await trx.insertInto('turn_provider_tools').values({ turn_id: record.id, iteration: 1, tools_hash: providerHash }).execute();
    });
  }

  async appendEvents(turnId: string, events: readonly StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    // One multi-row INSERT: atomic on its own, no transaction needed.
    await insertEvents(this.#db, turnId, events);
  }

  async finishTurn(turnId: string, events: readonly StoredEvent[], finish: TurnFinish): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await insertEvents(trx, turnId, events);
      await trx
        .updateTable('turns')
        .set({
          status: finish.status,
          finished_at: finish.finishedAt,
          iterations: finish.iterations,
          output: finish.output === null ? null : withoutNul(finish.output),
          result_json: finish.result === undefined ? null : JSON.stringify(finish.result),
          error_json: finish.error === null ? null : JSON.stringify(finish.error),
          outcome: finish.outcome,
          input_tokens: finish.usage.inputTokens,
          output_tokens: finish.usage.outputTokens,
        })
        .where('id', '=', turnId)
        .execute();
    });
  }

  async recordProviderTools(turnId: string, iteration: number, json: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const hash = await saveToolSet(trx, json);
      await trx.insertInto('turn_provider_tools').values({ turn_id: turnId, iteration, tools_hash: hash }).execute();
    });
  }

  async heartbeat(turnIds: readonly string[], at: string): Promise<void> {
    if (turnIds.length === 0) return;
    await this.#db
      .updateTable('turns')
      .set({ heartbeat_at: at })
      .where('id', 'in', [...turnIds])
      .where('status', '=', 'running')
      .execute();
  }

  async interruptOrphans(options: { owner: string; staleBefore: string; now: string }): Promise<string[]> {
    return this.#db.transaction().execute(async (trx) => {
      const orphans = await trx
        .selectFrom('turns')
        .select((eb) => [
          'id',
          'iterations',
          'input_tokens',
          'output_tokens',
          eb.selectFrom('turn_events').select((inner) => inner.fn.coalesce(inner.fn.max('seq'), inner.lit(0)).as('seq')).whereRef('turn_events.turn_id', '=', 'turns.id').as('last_seq'),
        ])
        .where('status', '=', 'running')
        .where((eb) => eb.or([eb('owner', '=', options.owner), eb('heartbeat_at', '<', options.staleBefore)]))
        .execute();
      for (const orphan of orphans) {
        const error: TurnError = {
          code: 'interrupted',
          message: 'the process running this turn stopped before the turn finished',
        };
        const usage = { inputTokens: orphan.input_tokens, outputTokens: orphan.output_tokens };
        const event: TurnEvent = {
          type: 'turn.failed',
          turnId: orphan.id,
          seq: (orphan.last_seq ?? 0) + 1,
          at: options.now,
          error,
          iterations: orphan.iterations,
          usage,
        };
        await insertEvents(trx, orphan.id, [{ seq: event.seq, type: event.type, json: JSON.stringify(event) }]);
        await trx
          .updateTable('turns')
          .set({ status: 'interrupted', finished_at: options.now, error_json: JSON.stringify(error), outcome: 'interrupted' })
          .where('id', '=', orphan.id)
          .execute();
      }
      return orphans.map((orphan) => orphan.id);
    });
  }

  async getTurn(turnId: string): Promise<TurnRecord | undefined> {
    const row = await this.#db.selectFrom('turns').selectAll().where('id', '=', turnId).executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      id: row.id,
      agentId: row.agent_id,
      kind: row.kind as TurnKind,
      status: row.status as TurnStatus,
      model: row.model,
      createdAt: row.created_at,
      finishedAt: row.finished_at,
      iterations: row.iterations,
      output: row.output,
      ...(row.result_json === null ? {} : { result: JSON.parse(row.result_json) as unknown }),
      error: row.error_json === null ? null : (JSON.parse(row.error_json) as TurnError),
      outcome: row.outcome,
      usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens },
      ...(row.schedule_id === null ? {} : { scheduleId: row.schedule_id }),
      ...(row.background_job_id === null ? {} : { backgroundJobId: row.background_job_id }),
    };
  }

  async getTask(turnId: string): Promise<StoredTask | undefined> {
    const row = await this.#db.selectFrom('turns').select('task_json').where('id', '=', turnId).executeTakeFirst();
    return row?.task_json == null ? undefined : (JSON.parse(row.task_json) as StoredTask);
  }

  async getTurnTools(turnId: string): Promise<TurnToolsRecord | undefined> {
    const turn = await this.#db.selectFrom('turns').select(['kind']).where('id', '=', turnId).executeTakeFirst();
    if (turn === undefined) return undefined;
    const tools = await this.#db
      .selectFrom('turn_tools')
      .innerJoin('tool_sets', 'tool_sets.hash', 'turn_tools.tools_hash')
      .select(['tool_sets.json as tools_json', 'turn_tools.unavailable_json as unavailable_json'])
      .where('turn_tools.turn_id', '=', turnId)
      .executeTakeFirst();
    const providerTools = await this.#db
      .selectFrom('turn_provider_tools')
      .innerJoin('tool_sets', 'tool_sets.hash', 'turn_provider_tools.tools_hash')
      .select(['turn_provider_tools.iteration as iteration', 'tool_sets.json as tools_json'])
      .where('turn_provider_tools.turn_id', '=', turnId)
      .orderBy('turn_provider_tools.iteration')
      .execute();
    return {
      turnId,
      kind: turn.kind as TurnKind,
      toolsJson: tools?.tools_json ?? '[]',
      unavailableJson: tools?.unavailable_json ?? '[]',
      providerTools: providerTools.map((row) => ({ iteration: row.iteration, json: row.tools_json })),
    };
  }

  async listEvents(turnId: string, options: { afterSeq: number; limit: number }): Promise<StoredEvent[]> {
    const rows = await this.#db
      .selectFrom('turn_events')
      .select(['seq', 'type', 'body'])
      .where('turn_id', '=', turnId)
      .where('seq', '>', options.afterSeq)
      .orderBy('seq')
      .limit(options.limit)
      .execute();
    return rows.map((row) => ({ seq: row.seq, type: row.type as TurnEvent['type'], json: row.body }));
  }

  async readTodos(agentId: string): Promise<readonly TodoItem[]> {
    const row = await this.#db.selectFrom('todos').select('items_json').where('agent_id', '=', agentId).executeTakeFirst();
    return row === undefined ? [] : (JSON.parse(row.items_json) as TodoItem[]);
  }

  async writeTodos(agentId: string, items: readonly TodoItem[]): Promise<void> {
    const itemsJson = JSON.stringify(items);
    const updatedAt = new Date().toISOString();
    await this.#db
      .insertInto('todos')
      .values({ agent_id: agentId, items_json: itemsJson, updated_at: updatedAt })
      .onConflict((conflict) =>
        conflict.column('agent_id').doUpdateSet((eb) => ({
          items_json: itemsJson,
          updated_at: updatedAt,
          revision: eb('todos.revision', '+', 1),
        })),
      )
      .execute();
  }

  async close(): Promise<void> {
    await this.#db.destroy();
  }
}

/** Keeps a tool list's JSON once, under its SHA-256; returns the hash. */
async function saveToolSet(trx: Transaction<Database>, json: string): Promise<string> {
  const hash = createHash('sha256').update(json).digest('hex');
  await trx
    .insertInto('tool_sets')
    .values({ hash, json })
    .onConflict((conflict) => conflict.column('hash').doNothing())
    .execute();
  return hash;
}

async function insertEvents(db: Kysely<Database> | Transaction<Database>, turnId: string, events: readonly StoredEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('turn_events')
    .values(events.map((event) => ({ turn_id: turnId, seq: event.seq, type: event.type, body: event.json })))
    .execute();
}

/**
 * The model's text with NUL characters replaced: PostgreSQL text cannot hold U+0000, and one
 * would fail the whole finishing transaction, leaving the turn running. The terminal event
 * keeps the exact text (JSON escapes it); SQLite gets the same value, so both dialects agree.
 */
function withoutNul(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}
