import type BetterSqlite3 from 'better-sqlite3';
import { Migrator, type Kysely, type Transaction } from 'kysely';
import type { BrainStore } from '../brain/brain-store.js';
import { createBrainStore } from '../brain/create-brain-store.js';
import { KyselyApprovalStore } from './kysely-approval-store.js';
import type { TodoItem } from './todo-store.js';
import type { CancelReason, TurnError, TurnEvent, TurnKind } from '../events/turn-events.js';
import type { Admission, AdmissionRequest, Promotion } from './coordination-store.js';
import * as coordination from './kysely-coordination.js';
import type { Database, TurnsTable } from './database-schema.js';
import { migrations } from './migrations.js';
import { SavedToolSets } from './saved-tool-sets.js';
import { insertNewTurn } from './insert-new-turn.js';
import { EVENT_ROWS_PER_INSERT, insertEvents } from './insert-events.js';
import { AdmissionQueries } from './admission-queries.js';
import type { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { createSqliteHotWrites, type SqliteHotWrites } from './sqlite-hot-writes.js';
import { turnFinishColumns } from './turn-finish-columns.js';
import type { TurnStore } from './turn-store.js';
import type { NewTurn, StoredEvent, StoredTask, TurnFinish, TurnListQuery, TurnProgress, TurnRecord, TurnStatus, TurnToolsRecord } from './turn-record.js';

/** The turn store over Kysely: one implementation for SQLite and PostgreSQL. */
export class KyselyTurnStore implements TurnStore {
  readonly #db: Kysely<Database>;
  readonly brain: BrainStore;
  readonly approvals: KyselyApprovalStore;
  /** SQLite's fast path for event batches and a turn's end; Kysely's statements otherwise. */
  readonly #hotWrites: SqliteHotWrites | undefined;
  /** Heartbeats and the orphan sweep: a pool of their own on PostgreSQL (see StoreDatabase.liveness). */
  readonly #liveness: Kysely<Database>;
  readonly #ownsLiveness: boolean;
  readonly #toolSets = new SavedToolSets();
  readonly #admission = new AdmissionQueries();
  /** SQLite: the thread that checkpoints the WAL, stopped before the database closes. */
  readonly #checkpointer: SqliteCheckpointer | undefined;

  private constructor(db: Kysely<Database>, sqlite: BetterSqlite3.Database | undefined, liveness: Kysely<Database> | undefined, checkpointer: SqliteCheckpointer | undefined) {
    this.#db = db;
    this.#checkpointer = checkpointer;
    this.#liveness = liveness ?? db;
    this.#ownsLiveness = liveness !== undefined;
    this.#hotWrites = sqlite === undefined ? undefined : createSqliteHotWrites(db, sqlite);
    this.brain = createBrainStore(db);
    this.approvals = new KyselyApprovalStore(db);
  }

  /**
   * Opens the store and brings its schema up to date. On PostgreSQL, pass the schema the store
   * lives in: without one, Kysely takes a migration table in any schema for its own.
   */
  static async open(
    db: Kysely<Database>,
    options: {
      readonly migrationTableSchema?: string;
      readonly sqlite?: BetterSqlite3.Database;
      readonly liveness?: Kysely<Database>;
      /** SQLite: starts the WAL's checkpointer, once the schema is up to date (see sqlite-checkpointer.ts). */
      readonly startCheckpointer?: () => SqliteCheckpointer;
    } = {},
  ): Promise<KyselyTurnStore> {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(migrations) },
      ...(options.migrationTableSchema === undefined ? {} : { migrationTableSchema: options.migrationTableSchema }),
    });
    const { error } = await migrator.migrateToLatest();
    if (error !== undefined) {
      await Promise.all([db.destroy(), options.liveness?.destroy()]);
      throw new Error(`the turn store could not be migrated: ${error instanceof Error ? error.message : 'unknown error'}`, { cause: error });
    }
    return new KyselyTurnStore(db, options.sqlite, options.liveness, options.startCheckpointer?.());
  }

  async createTurn(turn: NewTurn): Promise<void> {
    const toolSets = this.#toolSets.writer();
    await this.#db.transaction().execute((trx) => insertNewTurn(trx, turn, toolSets, this.#admission));
    toolSets.committed();
  }

  async appendEvents(turnId: string, events: readonly StoredEvent[], progress?: TurnProgress): Promise<void> {
    if (events.length === 0) {
      if (progress !== undefined) await this.recordProgress(turnId, progress);
      return;
    }
    if (this.#hotWrites !== undefined) {
      await this.#hotWrites.appendEvents(turnId, events, progress);
      return;
    }
    // One multi-row INSERT is atomic on its own; a batch that takes several, or progress beside it, needs a transaction.
    if (events.length <= EVENT_ROWS_PER_INSERT && progress === undefined) await insertEvents(this.#db, turnId, events);
    else {
      await this.#db.transaction().execute(async (trx) => {
        await insertEvents(trx, turnId, events);
        if (progress !== undefined) await updateProgress(trx, turnId, progress);
      });
    }
  }

  async recordProgress(turnId: string, progress: TurnProgress): Promise<void> {
    await updateProgress(this.#db, turnId, progress);
  }

  async finishTurn(turnId: string, events: readonly StoredEvent[], finish: TurnFinish, options: { readonly releaseAgent?: string } = {}): Promise<void> {
    if (this.#hotWrites !== undefined) {
      await this.#hotWrites.finishTurn(turnId, events, finish, options.releaseAgent);
      return;
    }
    await this.#db.transaction().execute(async (trx) => {
      await insertEvents(trx, turnId, events);
      if (options.releaseAgent !== undefined) await coordination.releaseAgentLease(trx, { agentId: options.releaseAgent, turnId });
      await trx.updateTable('turns').set(turnFinishColumns(finish)).where('id', '=', turnId).execute();
    });
  }

  async recordProviderTools(turnId: string, iteration: number, json: string): Promise<void> {
    const toolSets = this.#toolSets.writer();
    await this.#db.transaction().execute(async (trx) => {
      const hash = await toolSets.save(trx, json);
      await trx.insertInto('turn_provider_tools').values({ turn_id: turnId, iteration, tools_hash: hash }).execute();
    });
    toolSets.committed();
  }

  async heartbeat(turnIds: readonly string[], at: string): Promise<string[]> {
    if (turnIds.length === 0) return [];
    const rows = await this.#liveness
      .updateTable('turns')
      .set({ heartbeat_at: at })
      .where('id', 'in', [...turnIds])
      .where('status', 'in', ['running', 'queued'])
      .returning('id')
      .execute();
    return rows.map((row) => row.id);
  }

  async interruptOrphans(options: { owner?: string; staleBefore: string; now: string }): Promise<string[]> {
    return this.#liveness.transaction().execute(async (trx) => {
      const orphans = await trx
        .selectFrom('turns')
        .select((eb) => [
          'id',
          'iterations',
          'input_tokens',
          'output_tokens',
          eb.selectFrom('turn_events').select((inner) => inner.fn.coalesce(inner.fn.max('seq'), inner.lit(0)).as('seq')).whereRef('turn_events.turn_id', '=', 'turns.id').as('last_seq'),
        ])
        .where('status', 'in', ['running', 'queued'])
        .where((eb) => eb.or([...(options.owner === undefined ? [] : [eb('owner', '=', options.owner)]), eb('heartbeat_at', '<', options.staleBefore)]))
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
    return { ...toTurnRecord(row), ...(row.status === 'requires_action' ? { pendingApprovals: await this.approvals.listPending(turnId) } : {}) };
  }

  async listTurns(options: TurnListQuery): Promise<TurnRecord[]> {
    let query = this.#db.selectFrom('turns').selectAll();
    if (options.agentId !== undefined) query = query.where('agent_id', '=', options.agentId);
    if (options.status !== undefined) query = query.where('status', '=', options.status);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
    return rows.map(toTurnRecord);
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

  admitTurn(request: AdmissionRequest): Promise<Admission> {
    const transact: coordination.Transact = this.#hotWrites?.transact ?? ((work) => this.#db.transaction().execute(work));
    return coordination.admitTurn(transact, request, this.#toolSets, this.#admission);
  }

  promoteQueuedTurn(options: { turnId: string; agentId: string; owner: string; now: string }): Promise<Promotion> {
    return coordination.promoteQueuedTurn(this.#db, options, this.#admission);
  }

  releaseAgentLease(options: { agentId: string; turnId: string }): Promise<void> {
    return coordination.releaseAgentLease(this.#db, options);
  }

  findIdempotencyKey(options: { scope: string; key: string }): Promise<{ turnId: string; bodyHash: string } | undefined> {
    return coordination.findIdempotencyKey(this.#db, options);
  }

  purgeCoordination(options: { before: string }): Promise<void> {
    return coordination.purgeCoordination(this.#db, options);
  }

  requestCancel(options: { turnId: string; reason: CancelReason; at: string }): Promise<void> {
    return coordination.requestCancel(this.#db, options);
  }

  listCancelRequests(turnIds: readonly string[]): Promise<{ turnId: string; reason: CancelReason }[]> {
    return coordination.listCancelRequests(this.#db, turnIds);
  }

  async close(): Promise<void> {
    await this.#checkpointer?.stop();
    await Promise.all([this.#db.destroy(), this.#ownsLiveness ? this.#liveness.destroy() : undefined]);
  }
}

function updateProgress(db: Kysely<Database> | Transaction<Database>, turnId: string, progress: TurnProgress): Promise<unknown> {
  return db
    .updateTable('turns')
    .set({ iterations: progress.iterations, input_tokens: progress.usage.inputTokens, output_tokens: progress.usage.outputTokens })
    .where('id', '=', turnId)
    .where('status', '=', 'running')
    .execute();
}

function toTurnRecord(row: TurnsTable): TurnRecord {
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
    ...(row.queued_at === null ? {} : { queuedAt: row.queued_at }),
    ...(row.schedule_id === null ? {} : { scheduleId: row.schedule_id }),
    ...(row.background_job_id === null ? {} : { backgroundJobId: row.background_job_id }),
  };
}
