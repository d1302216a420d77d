import { sql, type Kysely, type Transaction } from 'kysely';
import { claimCreationKey, type CreationKey } from '../durable/creation-keys.js';
import type { DurableWork, EnqueueOptions } from '../durable/durable-work.js';
import { transactionWithJobs, type EnqueueWithin } from '../durable/transaction-with-jobs.js';
import { lockForTransaction } from '../store/transaction-lock.js';
import { TERMINAL_WORKFLOW_EVENTS, type StoredWorkflowEvent, type WorkflowEventBody } from './workflow-events.js';
import { advanceJob, taskJob } from './workflow-queues.js';
import type { WorkflowRunRow, WorkflowTables, WorkflowTaskRow, WorkflowTaskState } from './workflow-tables.js';

type Db = Kysely<WorkflowTables> | Transaction<WorkflowTables>;

/** Failed tasks a run's record names (the earliest); the counts say how many there are. */
export const FAILURES_SHOWN = 10;

/** A run with what its record says of its tasks. */
export interface RunSummary {
  readonly run: WorkflowRunRow;
  readonly counts: { readonly total: number; readonly running: number; readonly succeeded: number; readonly failed: number; readonly cancelled: number };
  readonly failures: { readonly seq: number; readonly label: string | null; readonly error: string | null }[];
}

/** A new task row, as a step inserts it. */
export type NewTask = Pick<WorkflowTaskRow, 'seq' | 'prompt' | 'label' | 'schema_json' | 'state' | 'value_json' | 'error'>;

/** What one engine step writes, atomically, if the run is still at the version it read. */
export interface StepWrite {
  readonly version: number;
  /** Seqs whose results this step fed to the script for the first time, as round `round`. */
  readonly fed: readonly number[];
  readonly round: number;
  readonly newTasks: readonly NewTask[];
  /** Queued seqs to dispatch, within the run's concurrency; as many as the agent's limit lets through are. */
  readonly dispatch: readonly number[];
  /** Tasks the agent may have dispatched or running across its runs (`WORKFLOW_TASKS_PER_AGENT`). */
  readonly agentTaskLimit: number;
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

  /**
   * Runs as the API shows them, in one statement however many there are: the page of runs
   * (one by id, or newest first by agent and status), their tasks' tallies and up to
   * `FAILURES_SHOWN` failed tasks of each (the earliest).
   */
  async readRuns(filter: { readonly id?: string; readonly agentId?: string | undefined; readonly status?: string | undefined; readonly limit: number }): Promise<RunSummary[]> {
    let page = this.#db.selectFrom('workflow_runs').selectAll();
    if (filter.id !== undefined) page = page.where('id', '=', filter.id);
    if (filter.agentId !== undefined) page = page.where('agent_id', '=', filter.agentId);
    if (filter.status !== undefined) page = page.where('status', '=', filter.status);
    const rows = await this.#db
      .with('page', () => page.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit))
      .with('tally', (db) =>
        db
          .selectFrom('workflow_tasks')
          .where('run_id', 'in', db.selectFrom('page').select('id'))
          .groupBy('run_id')
          .select([
            'run_id',
            sql<number | string>`count(*)`.as('total'),
            sql<number | string>`sum(case when state in ('queued', 'dispatched', 'running') then 1 else 0 end)`.as('running'),
            sql<number | string>`sum(case when state = 'succeeded' then 1 else 0 end)`.as('succeeded'),
            sql<number | string>`sum(case when state = 'failed' then 1 else 0 end)`.as('failed'),
            sql<number | string>`sum(case when state = 'cancelled' then 1 else 0 end)`.as('cancelled'),
          ]),
      )
      .with('failure', (db) =>
        db
          .selectFrom('workflow_tasks')
          .where('state', '=', 'failed')
          .where('run_id', 'in', db.selectFrom('page').select('id'))
          .select(['run_id', 'seq', 'label', 'error', sql<number>`row_number() over (partition by run_id order by seq)`.as('rank')]),
      )
      .selectFrom('page')
      .leftJoin('tally', 'tally.run_id', 'page.id')
      .leftJoin('failure', (join) => join.onRef('failure.run_id', '=', 'page.id').on('failure.rank', '<=', FAILURES_SHOWN))
      .selectAll('page')
      .select(['tally.total', 'tally.running', 'tally.succeeded', 'tally.failed', 'tally.cancelled', 'failure.seq as failure_seq', 'failure.label as failure_label', 'failure.error as failure_error'])
      .orderBy('page.created_at', 'desc')
      .orderBy('page.id', 'desc')
      .orderBy('failure.seq')
      .execute();
    const runs = new Map<string, RunSummary>();
    for (const row of rows) {
      const { total, running, succeeded, failed, cancelled, failure_seq, failure_label, failure_error, ...run } = row;
      let summary = runs.get(run.id);
      if (summary === undefined) {
        summary = { run, counts: { total: Number(total ?? 0), running: Number(running ?? 0), succeeded: Number(succeeded ?? 0), failed: Number(failed ?? 0), cancelled: Number(cancelled ?? 0) }, failures: [] };
        runs.set(run.id, summary);
      }
      if (failure_seq !== null) summary.failures.push({ seq: failure_seq, label: failure_label, error: failure_error });
    }
    return [...runs.values()];
  }

  listTasks(runId: string): Promise<WorkflowTaskRow[]> {
    return this.#db.selectFrom('workflow_tasks').selectAll().where('run_id', '=', runId).orderBy('seq').execute();
  }

  getTask(runId: string, seq: number): Promise<WorkflowTaskRow | undefined> {
    return this.#db.selectFrom('workflow_tasks').selectAll().where('run_id', '=', runId).where('seq', '=', seq).executeTakeFirst();
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
   * The seq of the run's terminal event, if it has one: one indexed read from the end of its
   * events (a run's end is its last event or near it), however many it has.
   */
  async terminalEventSeq(runId: string): Promise<number | undefined> {
    const row = await this.#db
      .selectFrom('workflow_events')
      .select('seq')
      .where('run_id', '=', runId)
      .where('type', 'in', [...TERMINAL_WORKFLOW_EVENTS])
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.seq;
  }

  /**
   * Writes a step if the run is still at `write.version`, with a job for each task it
   * dispatches and the jobs it calls for; false when another step got there first.
   */
  async commitStep(runId: string, write: StepWrite): Promise<boolean> {
    const now = this.#now();
    return this.#transaction(async (trx, enqueue) => {
      const run = await trx.selectFrom('workflow_runs').select('agent_id').where('id', '=', runId).executeTakeFirst();
      if (run === undefined) return false;
      // Before any row lock, as in settleTask: one order of locks, so the two never deadlock.
      if (write.dispatch.length > 0 || write.cancelQueued || write.finish !== undefined) await lockAgentSlots(trx, run.agent_id);
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
      for (const task of write.newTasks) {
        await trx
          .insertInto('workflow_tasks')
          .values({ ...task, run_id: runId, agent_id: run.agent_id, attempts: 0, round: null, turn_ids_json: '[]', owner: null, job_id: null, claims: 0, heartbeat_at: null, created_at: now, finished_at: task.state === 'queued' ? null : now })
          .execute();
      }
      const dispatch = write.dispatch.length === 0 ? [] : await takeAgentSlots(trx, { agentId: run.agent_id, limit: write.agentTaskLimit, wanted: write.dispatch });
      if (dispatch.length > 0) {
        await trx.updateTable('workflow_tasks').set({ state: 'dispatched' }).where('run_id', '=', runId).where('seq', 'in', dispatch).where('state', '=', 'queued').execute();
      }
      if (write.cancelQueued || write.finish !== undefined) {
        const freed = await trx.updateTable('workflow_tasks').set({ state: 'cancelled', finished_at: now }).where('run_id', '=', runId).where('state', 'in', ['queued', 'dispatched']).executeTakeFirst();
        // Dispatched tasks held slots of the agent: its runs waiting for one may go on.
        if (freed.numUpdatedRows > 0n) await wakeRunsWaitingForSlots(trx, enqueue, { agentId: run.agent_id, except: runId });
      }
      await appendEvents(trx, runId, write.events, now);
      for (const seq of dispatch) await enqueue(taskJob(runId, seq));
      for (const job of write.jobs) await enqueue(job);
      if (!write.cancelQueued && write.finish === undefined && (await cameAfterRead(trx, runId))) await enqueue(advanceJob(runId));
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
      // Before the task's row lock: the slot it frees and the wake it sends are seen together.
      if (run !== undefined) await lockAgentSlots(trx, run.agent_id);
      // Then the run's row, before the task's: a step that read the run before this commits
      // cannot commit before it either, and then sees this result (see cameAfterRead).
      await trx.updateTable('workflow_runs').set((eb) => ({ version: eb.ref('version') })).where('id', '=', options.runId).execute();
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
      if (run !== undefined) await wakeRunsWaitingForSlots(trx, enqueue, { agentId: run.agent_id, except: options.runId });
      return state;
    });
  }

  /**
   * Forgets runs that ended before `before` (ISO 8601), in bounded batches: first up to `limit`
   * of their events, then, once a run has none left, up to `limit` such runs with their tasks.
   * Answers the larger count (a full batch means there may be more).
   */
  async pruneFinished(options: { readonly before: string; readonly limit: number }): Promise<number> {
    const events = await this.#db
      .deleteFrom('workflow_events')
      .where((eb) =>
        eb(
          eb.refTuple('run_id', 'seq'),
          'in',
          eb.selectFrom('workflow_events as event').innerJoin('workflow_runs as run', 'run.id', 'event.run_id').select(['event.run_id', 'event.seq']).where('run.finished_at', '<', options.before).limit(options.limit).$asTuple('run_id', 'seq'),
        ),
      )
      .executeTakeFirst();
    const runs = await this.#db
      .selectFrom('workflow_runs')
      .select('id')
      .where('finished_at', '<', options.before)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('workflow_events').select('seq').whereRef('workflow_events.run_id', '=', 'workflow_runs.id'))))
      .limit(options.limit)
      .execute();
    if (runs.length > 0) {
      const ids = runs.map((run) => run.id);
      await this.#db.transaction().execute(async (trx) => {
        await trx.deleteFrom('workflow_tasks').where('run_id', 'in', ids).execute();
        await trx.deleteFrom('workflow_runs').where('id', 'in', ids).execute();
      });
    }
    return Math.max(Number(events.numDeletedRows), runs.length);
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

/**
 * Whether a task settled, or a cancel came, after this step read the run: then its own wake may
 * have been dropped (a stately queue keeps one job waiting per run, and this step's job was
 * it, not yet running), so the step asks for the next one. A settle and a cancel lock the run
 * row first and this step updated it before asking, so either one committed before this
 * question (and is seen here), or it commits after this step did and its wake is kept.
 */
async function cameAfterRead(trx: Transaction<WorkflowTables>, runId: string): Promise<boolean> {
  const unfed = await trx
    .selectFrom('workflow_tasks')
    .select('seq')
    .where('run_id', '=', runId)
    .where('round', 'is', null)
    .where('state', 'in', ['succeeded', 'failed', 'cancelled'])
    .limit(1)
    .executeTakeFirst();
  if (unfed !== undefined) return true;
  const run = await trx.selectFrom('workflow_runs').select('cancel_requested').where('id', '=', runId).executeTakeFirst();
  return run?.cancel_requested === 1;
}

/** Running runs of the agent with calls waiting for a slot. */
/**
 * Makes the transactions that take or free an agent's task slots (dispatch, settle, cancel) run
 * one at a time per agent, on any replica; each takes it before any row lock.
 */
function lockAgentSlots(trx: Transaction<WorkflowTables>, agentId: string): Promise<void> {
  return lockForTransaction(trx, `workflow-agent-slots:${agentId}`);
}

/**
 * Of the `wanted` seqs (in order), those the agent has slots for: its tasks dispatched or
 * running across its runs stay within `limit`. The caller holds the agent's lock, so
 * concurrent steps of its runs never pass the limit between them.
 */
async function takeAgentSlots(trx: Transaction<WorkflowTables>, options: { readonly agentId: string; readonly limit: number; readonly wanted: readonly number[] }): Promise<number[]> {
  const row = await trx
    .selectFrom('workflow_tasks')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('agent_id', '=', options.agentId)
    .where('state', 'in', ['dispatched', 'running'])
    .executeTakeFirst();
  const free = options.limit - Number(row?.count ?? 0);
  return free <= 0 ? [] : options.wanted.slice(0, free);
}

/**
 * After slots of the agent came free, wakes its other runs with queued tasks. The caller holds
 * the agent's lock: a step that found no slot has committed its queued tasks by now (and is
 * woken here), or counts after this transaction (and finds the slot).
 */
async function wakeRunsWaitingForSlots(trx: Transaction<WorkflowTables>, enqueue: EnqueueWithin, options: { readonly agentId: string; readonly except: string }): Promise<void> {
  const rows = await trx
    .selectFrom('workflow_tasks')
    .innerJoin('workflow_runs', 'workflow_runs.id', 'workflow_tasks.run_id')
    .select('workflow_tasks.run_id')
    .distinct()
    .where('workflow_tasks.agent_id', '=', options.agentId)
    .where('workflow_tasks.state', '=', 'queued')
    .where('workflow_runs.status', '=', 'running')
    .execute();
  for (const { run_id: waiting } of rows) if (waiting !== options.except) await enqueue(advanceJob(waiting));
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
