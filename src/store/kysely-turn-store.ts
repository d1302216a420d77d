import type BetterSqlite3 from 'better-sqlite3';
import { Migrator, type Kysely, type Transaction } from 'kysely';
import type { BrainStore } from '../brain/brain-store.js';
import { createBrainStore } from '../brain/create-brain-store.js';
import { KyselyApprovalStore } from './kysely-approval-store.js';
import type { TodoItem } from './todo-store.js';
import type { CancelReason, TurnEvent } from '../events/turn-events.js';
import type { Admission, AdmissionRequest, Promotion } from './coordination-store.js';
import * as coordination from './kysely-coordination.js';
import type { Database } from './database-schema.js';
import { migrations } from './migrations.js';
import { SavedToolSets } from './saved-tool-sets.js';
import { insertNewTurn } from './insert-new-turn.js';
import { EVENT_ROWS_PER_INSERT, insertEvents } from './insert-events.js';
import { AdmissionQueries } from './admission-queries.js';
import type { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { createSqliteHotWrites, type SqliteHotWrites } from './sqlite-hot-writes.js';
import { turnFinishColumns } from './turn-finish-columns.js';
import { interruptOrphans } from './interrupt-orphans.js';
import { readTodos, writeTodos } from './kysely-todos.js';
import { readTurnTools } from './read-turn-tools.js';
import { toTurnRecord } from './to-turn-record.js';
import type { TurnStore } from './turn-store.js';
import type { NewTurn, StoredEvent, StoredTask, TurnFinish, TurnListQuery, TurnProgress, TurnRecord, TurnToolsRecord } from './turn-record.js';

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

  private constructor(db: Kysely<Database>, sqlite: BetterSqlite3.Database | undefined, liveness: Kysely<Database> | undefined, checkpointer: SqliteCheckpointer | undefined, brainPagesPerAgent: number | undefined) {
    this.#db = db;
    this.#checkpointer = checkpointer;
    this.#liveness = liveness ?? db;
    this.#ownsLiveness = liveness !== undefined;
    this.#hotWrites = sqlite === undefined ? undefined : createSqliteHotWrites(db, sqlite);
    this.brain = createBrainStore(db, brainPagesPerAgent === undefined ? {} : { maxPagesPerAgent: brainPagesPerAgent });
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
      /** Pages one agent's Brain may keep (`BRAIN_PAGES_PER_AGENT`); the Brain's default without. */
      readonly brainPagesPerAgent?: number;
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
    return new KyselyTurnStore(db, options.sqlite, options.liveness, options.startCheckpointer?.(), options.brainPagesPerAgent);
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
    return interruptOrphans(this.#liveness, options);
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
    return readTurnTools(this.#db, turnId);
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

  async lastEvent(turnId: string): Promise<StoredEvent | undefined> {
    const row = await this.#db.selectFrom('turn_events').select(['seq', 'type', 'body']).where('turn_id', '=', turnId).orderBy('seq', 'desc').limit(1).executeTakeFirst();
    return row === undefined ? undefined : { seq: row.seq, type: row.type as TurnEvent['type'], json: row.body };
  }

  async readTodos(agentId: string): Promise<readonly TodoItem[]> {
    return readTodos(this.#db, agentId);
  }

  async writeTodos(agentId: string, items: readonly TodoItem[]): Promise<void> {
    await writeTodos(this.#db, agentId, items);
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
