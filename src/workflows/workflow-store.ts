import { sql, type Kysely, type Transaction } from 'kysely';
import { claimCreationKey, type CreationKey } from '../durable/creation-keys.js';
import type { DurableWork, EnqueueOptions } from '../durable/durable-work.js';
import { transactionWithJobs, type EnqueueWithin } from '../durable/transaction-with-jobs.js';
import type { StoredWorkflowEvent, WorkflowEventBody } from './workflow-events.js';
import { advanceJob, taskJob } from './workflow-queues.js';
import type { WorkflowRunRow, WorkflowTables, WorkflowTaskRow, WorkflowTaskState } from './workflow-tables.js';

type Db = Kysely<WorkflowTables> | Transaction<WorkflowTables>;

/** A new task row, as a step inserts it. */
export type NewTask = Pick<WorkflowTaskRow, 'seq' | 'prompt' | 'label' | 'schema_json' | 'state' | 'value_json' | 'error'>;

/** What one engine step writes, atomically, if the run is still at the version it read. */
export interface StepWrite {
  readonly version: number;
  /** Seqs whose results this step fed to the script for the first time, as round `round`. */
  readonly fed: readonly number[];
  readonly round: number;
  readonly newTasks: readonly NewTask[];
  readonly dispatch: readonly number[];
  readonly cancelQueued: boolean;
  readonly finish?: { readonly status: 'completed' | 'failed' | 'cancelled'; readonly resultJson: string | null; readonly errorJson: string | null };
  readonly events: readonly WorkflowEventBody[];
  /** Further jobs the step calls for (the run's webhook when it ends), enqueued in its transaction. */
  readonly jobs: readonly EnqueueOptions[];
}

/**
 * Workflow runs, their tasks and their events, in the store's database (SQLite or PostgreSQL).
 * Every write that calls for more work enqueues its job in the same transaction: a run is
 * created with its first step's job, a task is dispatched with its task job, a settled task or a
 * cancel wakes its run, an ended run stores its webhook. No crash can leave one without the other.
 */
export class WorkflowStore {
  readonly #db: Kysely<WorkflowTables>;
  readonly #durable: DurableWork;
  readonly #now: () => string;

  constructor(options: { readonly db: Kysely<WorkflowTables>; readonly durable: DurableWork; readonly now: () => string }) {
    this.#db = options.db;
    this.#durable = options.durable;
    this.#now = options.now;
  }

  #transaction<T>(write: (trx: Transaction<WorkflowTables>, enqueue: EnqueueWithin) => Promise<T>): Promise<T> {
    return transactionWithJobs({ db: this.#db, durable: this.#durable }, write);
  }

  /**
   * Inserts the run with its `workflow.started` event and its first step's job; on a second
   * start for the same tool call, or with the `Idempotency-Key` of an earlier start, returns the
   * first run's id instead.
   */
  async createRun(row: WorkflowRunRow, started: WorkflowEventBody, key?: CreationKey): Promise<{ created: boolean; id: string }> {
    const source = row.source_turn_id === null || row.source_call_id === null ? undefined : { turnId: row.source_turn_id, callId: row.source_call_id };
    if (source !== undefined) {
      const existing = await this.findRunByCall(source.turnId, source.callId);
      if (existing !== undefined) return { created: false, id: existing };
    }
    try {
      return await this.#transaction(async (trx, enqueue) => {
        const earlier = key === undefined ? undefined : await claimCreationKey(trx, { kind: 'workflow', key, resourceId: row.id, createdAt: row.created_at });
        if (earlier !== undefined) return { created: false, id: earlier };
        await trx.insertInto('workflow_runs').values(row).execute();
        await appendEvents(trx, row.id, [started], this.#now());
        await enqueue(advanceJob(row.id));
        return { created: true, id: row.id };
      });
    } catch (error) {
      // Two starts for one call raced: the unique index let one through.
      const existing = source === undefined ? undefined : await this.findRunByCall(source.turnId, source.callId);
      if (existing !== undefined) return { created: false, id: existing };
      throw error;
    }
  }

  /** The run a tool call started: keyed by its turn and call (call ids repeat from turn to turn). */
  async findRunByCall(turnId: string, callId: string): Promise<string | undefined> {
    const found = await this.#db.selectFrom('workflow_runs').select('id').where('source_turn_id', '=', turnId).where('source_call_id', '=', callId).executeTakeFirst();
    return found?.id;
  }

  getRun(id: string): Promise<WorkflowRunRow | undefined> {
    return this.#db.selectFrom('workflow_runs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  listRuns(options: { readonly agentId?: string | undefined; readonly status?: string | undefined; readonly limit: number }): Promise<WorkflowRunRow[]> {
    let query = this.#db.selectFrom('workflow_runs').selectAll();
    if (options.agentId !== undefined) query = query.where('agent_id', '=', options.agentId);
    if (options.status !== undefined) query = query.where('status', '=', options.status);
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
  }

  listTasks(runId: string): Promise<WorkflowTaskRow[]> {
    return this.#db.selectFrom('workflow_tasks').selectAll().where('run_id', '=', runId).orderBy('seq').execute();
  }

  getTask(runId: string, seq: number): Promise<WorkflowTaskRow | undefined> {
    return this.#db.selectFrom('workflow_tasks').selectAll().where('run_id', '=', runId).where('seq', '=', seq).executeTakeFirst();
  }

  /** Calls of this agent holding a slot (dispatched or running), across its runs. */
  async countActiveTasks(agentId: string): Promise<number> {
    const row = await this.#db
      .selectFrom('workflow_tasks')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('agent_id', '=', agentId)
      .where('state', 'in', ['dispatched', 'running'])
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  appendEvent(runId: string, body: WorkflowEventBody): Promise<void> {
    return this.#db.transaction().execute((trx) => appendEvents(trx, runId, [body], this.#now()));
  }

  async listEvents(runId: string, options: { readonly afterSeq: number; readonly limit: number }): Promise<StoredWorkflowEvent[]> {
    const rows = await this.#db
      .selectFrom('workflow_events')
      .select(['seq', 'type', 'body'])
      .where('run_id', '=', runId)
      .where('seq', '>', options.afterSeq)
      .orderBy('seq')
      .limit(options.limit)
      .execute();
    return rows.map((row) => ({ seq: row.seq, type: row.type, json: row.body }));
  }

  /**
   * Writes a step if the run is still at `write.version`, with a job for each task it
   * dispatches and the jobs it calls for; false when another step got there first.
   */
  async commitStep(runId: string, write: StepWrite): Promise<boolean> {
    const now = this.#now();
    return this.#transaction(async (trx, enqueue) => {
      const bumped = await trx
        .updateTable('workflow_runs')
        .set({
          version: write.version + 1,
          round: write.round,
          ...(write.finish === undefined ? {} : { status: write.finish.status, finished_at: now, result_json: write.finish.resultJson, error_json: write.finish.errorJson }),
        })
        .where('id', '=', runId)
        .where('version', '=', write.version)
        .where('status', '=', 'running')
        .executeTakeFirst();
      if (bumped.numUpdatedRows === 0n) return false;
      if (write.fed.length > 0) {
        await trx.updateTable('workflow_tasks').set({ round: write.round }).where('run_id', '=', runId).where('seq', 'in', [...write.fed]).where('round', 'is', null).execute();
      }
      const run = await trx.selectFrom('workflow_runs').select('agent_id').where('id', '=', runId).executeTakeFirstOrThrow();
      for (const task of write.newTasks) {
        await trx
          .insertInto('workflow_tasks')
          .values({ ...task, run_id: runId, agent_id: run.agent_id, attempts: 0, round: null, turn_ids_json: '[]', owner: null, job_id: null, claims: 0, heartbeat_at: null, created_at: now, finished_at: task.state === 'queued' ? null : now })
          .execute();
      }
      if (write.dispatch.length > 0) {
        await trx.updateTable('workflow_tasks').set({ state: 'dispatched' }).where('run_id', '=', runId).where('seq', 'in', [...write.dispatch]).where('state', '=', 'queued').execute();
      }
      if (write.cancelQueued || write.finish !== undefined) {
        await trx.updateTable('workflow_tasks').set({ state: 'cancelled', finished_at: now }).where('run_id', '=', runId).where('state', 'in', ['queued', 'dispatched']).execute();
      }
      await appendEvents(trx, runId, write.events, now);
      for (const seq of write.dispatch) await enqueue(taskJob(runId, seq));
      for (const job of write.jobs) await enqueue(job);
      return true;
    });
  }

  /** Takes a task for this worker if nobody claimed it since it was read. */
  async claimTask(options: { readonly runId: string; readonly seq: number; readonly claims: number; readonly owner: string; readonly jobId: string }): Promise<boolean> {
    const result = await this.#db
      .updateTable('workflow_tasks')
      .set({ state: 'running', owner: options.owner, job_id: options.jobId, claims: options.claims + 1, heartbeat_at: this.#now() })
      .where('run_id', '=', options.runId)
      .where('seq', '=', options.seq)
      .where('claims', '=', options.claims)
      .where('state', 'in', ['queued', 'dispatched', 'running'])
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Records an attempt's turn and its `task.started` event, once: a turn already recorded is left as it is. */
  async startAttempt(options: { readonly runId: string; readonly seq: number; readonly turnId: string; readonly event: WorkflowEventBody }): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const task = await trx.selectFrom('workflow_tasks').select('turn_ids_json').where('run_id', '=', options.runId).where('seq', '=', options.seq).executeTakeFirstOrThrow();
      const recorded = JSON.parse(task.turn_ids_json) as string[];
      if (recorded.includes(options.turnId)) return;
      await trx.updateTable('workflow_tasks').set({ turn_ids_json: JSON.stringify([...recorded, options.turnId]) }).where('run_id', '=', options.runId).where('seq', '=', options.seq).execute();
      await appendEvents(trx, options.runId, [options.event], this.#now());
    });
  }

  /** An attempt that ended without a result; the task stays with its owner for the next one. */
  async failAttempt(options: { readonly runId: string; readonly seq: number; readonly attempts: number; readonly error: string; readonly event: WorkflowEventBody }): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx.updateTable('workflow_tasks').set({ attempts: options.attempts, error: options.error }).where('run_id', '=', options.runId).where('seq', '=', options.seq).execute();
      await appendEvents(trx, options.runId, [options.event], this.#now());
    });
  }

  /**
   * Settles a task, once: only while it is not settled yet, and as `cancelled` instead when the
   * run was cancelled or ended meanwhile (a late result is ignored). With it go the jobs that
   * wake the run and the agent's other runs waiting for a free task slot. Returns the state written.
   */
  async settleTask(options: {
    readonly runId: string;
    readonly seq: number;
    readonly state: 'succeeded' | 'failed' | 'cancelled';
    readonly attempts: number;
    readonly valueJson: string | null;
    readonly error: string | null;
    readonly event: WorkflowEventBody | undefined;
  }): Promise<WorkflowTaskState | undefined> {
    const now = this.#now();
    return this.#transaction(async (trx, enqueue) => {
      const run = await trx.selectFrom('workflow_runs').select(['status', 'cancel_requested', 'agent_id']).where('id', '=', options.runId).executeTakeFirst();
      const ignored = run === undefined || run.status !== 'running' || run.cancel_requested === 1;
      const state: WorkflowTaskState = ignored ? 'cancelled' : options.state;
      const result = await trx
        .updateTable('workflow_tasks')
        .set({ state, attempts: options.attempts, value_json: state === 'succeeded' ? options.valueJson : state === 'failed' ? 'null' : null, error: options.error, finished_at: now })
        .where('run_id', '=', options.runId)
        .where('seq', '=', options.seq)
        .where('state', 'not in', ['succeeded', 'failed', 'cancelled'])
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return undefined;
      if (!ignored && options.event !== undefined) await appendEvents(trx, options.runId, [options.event], now);
      await enqueue(advanceJob(options.runId));
      // A slot of the agent came free: its runs waiting for one may go on.
      if (run !== undefined) for (const waiting of await runsWaitingForSlots(trx, run.agent_id)) if (waiting !== options.runId) await enqueue(advanceJob(waiting));
      return state;
    });
  }

  /** Marks the owner's running tasks as alive. */
  async heartbeat(owner: string, keys: readonly { readonly runId: string; readonly seq: number }[]): Promise<void> {
    const now = this.#now();
    for (const key of keys) {
      await this.#db.updateTable('workflow_tasks').set({ heartbeat_at: now }).where('run_id', '=', key.runId).where('seq', '=', key.seq).where('owner', '=', owner).execute();
    }
  }

  /** Of these runs, the ones whose tasks must stop: cancel requested, or the run already ended. */
  async runsToStop(runIds: readonly string[]): Promise<string[]> {
    if (runIds.length === 0) return [];
    const rows = await this.#db
      .selectFrom('workflow_runs')
      .select('id')
      .where('id', 'in', [...runIds])
      .where((eb) => eb.or([eb('cancel_requested', '=', 1), eb('status', '!=', 'running')]))
      .execute();
    return rows.map((row) => row.id);
  }

  /** Sets the cancel flag of a running run, with the job that steps it; false when it is not running. */
  requestCancel(runId: string): Promise<boolean> {
    return this.#transaction(async (trx, enqueue) => {
      const result = await trx.updateTable('workflow_runs').set({ cancel_requested: 1 }).where('id', '=', runId).where('status', '=', 'running').where('cancel_requested', '=', 0).executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await enqueue(advanceJob(runId));
      return true;
    });
  }
}

/** Running runs of the agent with calls waiting for a slot. */
async function runsWaitingForSlots(db: Db, agentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('workflow_tasks')
    .innerJoin('workflow_runs', 'workflow_runs.id', 'workflow_tasks.run_id')
    .select('workflow_tasks.run_id')
    .distinct()
    .where('workflow_tasks.agent_id', '=', agentId)
    .where('workflow_tasks.state', '=', 'queued')
    .where('workflow_runs.status', '=', 'running')
    .execute();
  return rows.map((row) => row.run_id);
}

/** Numbers and stores events in the caller's transaction; the run row's counter serialises writers. */
async function appendEvents(trx: Db, runId: string, bodies: readonly WorkflowEventBody[], at: string): Promise<void> {
  if (bodies.length === 0) return;
  const bumped = await trx
    .updateTable('workflow_runs')
    .set({ event_seq: sql`event_seq + ${bodies.length}` })
    .where('id', '=', runId)
    .returning('event_seq')
    .executeTakeFirstOrThrow();
  const first = bumped.event_seq - bodies.length + 1;
  await trx
    .insertInto('workflow_events')
    .values(
      bodies.map((body, index) => {
        const { type, ...fields } = body;
        const event = { type, workflowId: runId, seq: first + index, at, ...fields };
        return { run_id: runId, seq: event.seq, type, body: JSON.stringify(event) };
      }),
    )
    .execute();
}
