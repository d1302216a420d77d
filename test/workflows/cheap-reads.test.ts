import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobEndedBefore } from '../../src/background-jobs/background-job-events.js';
import type { BackgroundJobTables } from '../../src/background-jobs/background-job-tables.js';
import { systemClock } from '../../src/clock.js';
import type { DurableWork } from '../../src/durable/durable-work.js';
import { openDurableWork } from '../../src/durable/open-durable-work.js';
import { openStoreDatabase, openTurnStoreOn, type StoreDatabase } from '../../src/store/open-turn-store.js';
import type { TurnStore } from '../../src/store/turn-store.js';
import { viewTables } from '../../src/store/view-tables.js';
import { WorkflowStore } from '../../src/workflows/workflow-store.js';
import { ADVANCE_QUEUE, TASK_QUEUE } from '../../src/workflows/workflow-queues.js';
import type { WorkflowRunRow, WorkflowTables } from '../../src/workflows/workflow-tables.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres-schema.js';

/** Counts the statements run through the Kysely instance it is plugged into (one result each; a subquery is part of its statement). */
class StatementCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.count += 1;
    return Promise.resolve(args.result);
  }
  async during<T>(work: () => Promise<T>): Promise<{ value: T; statements: number }> {
    const before = this.count;
    const value = await work();
    return { value, statements: this.count - before };
  }
}

const EVENTS = 10_000;

/**
 * The reads that stay cheap however much work there is: a page of 200 runs is one statement, a
 * run's or a job's end among 10,000 events is one indexed read, and the per-agent task limit holds
 * when many steps of one agent's runs dispatch at once (on PostgreSQL, from concurrent transactions).
 */
describe.each(['SQLite', 'PostgreSQL'] as const)('reads that stay cheap on %s', (storeName) => {
  let database: StoreDatabase;
  let turnStore: TurnStore;
  let durable: DurableWork;
  let store: WorkflowStore;
  const counter = new StatementCounter();
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    let schema: PostgresSchema | undefined;
    let dataDir: string | undefined;
    if (storeName === 'PostgreSQL') {
      schema = await createPostgresSchema();
      database = await openStoreDatabase({ databaseUrl: schema.url, dataDir: tmpdir() });
      const made = schema;
      turnStore = await made.whileSchemasAreStable(() => openTurnStoreOn(database));
    } else {
      dataDir = await mkdtemp(path.join(tmpdir(), 'cheap-reads-'));
      database = await openStoreDatabase({ databaseUrl: undefined, dataDir });
      turnStore = await openTurnStoreOn(database);
    }
    durable = await openDurableWork({ database, databaseUrl: schema?.url, superviseSeconds: 1, leaseSeconds: 15, retentionDays: 30, clock: systemClock, logger: pino({ level: 'silent' }) });
    // The queues the engine defines (no worker takes their jobs here).
    await durable.defineQueue({ name: ADVANCE_QUEUE, policy: 'stately', retryLimit: 50, retryDelaySeconds: 1, backoff: true });
    await durable.defineQueue({ name: TASK_QUEUE, policy: 'standard', retryLimit: 100_000, retryDelaySeconds: 2, backoff: false });
    store = new WorkflowStore({ db: viewTables<WorkflowTables>(database).withPlugin(counter), durable, now: () => new Date().toISOString() });
    cleanup = async () => {
      await durable.stop();
      await turnStore.close();
      await schema?.drop();
      if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    };
  }, 60_000);
  afterAll(() => cleanup());

  const tables = () => viewTables<WorkflowTables>(database);
  async function createRun(id: string, agentId: string, createdAt: string): Promise<void> {
    const row: WorkflowRunRow = {
      id,
      agent_id: agentId,
      title: id,
      status: 'running',
      script: 'return 1;',
      args_json: '{}',
      agent_json: JSON.stringify({ id: agentId, tools: {} }),
      model_json: '{"tasks":{}}',
      concurrency: 8,
      max_agent_calls: 256,
      webhook_url: null,
      source_turn_id: null,
      source_call_id: null,
      seed: 1,
      created_at: createdAt,
      finished_at: null,
      result_json: null,
      error_json: null,
      cancel_requested: 0,
      round: 0,
      version: 0,
      event_seq: 0,
    };
    await store.createRun(row, { type: 'workflow.started', agentId, title: id, concurrency: 8, maxAgentCalls: 256 });
  }
  async function addTasks(runId: string, agentId: string, states: readonly string[]): Promise<void> {
    const now = new Date().toISOString();
    await tables()
      .insertInto('workflow_tasks')
      .values(
        states.map((state, index) => ({
          run_id: runId,
          seq: index + 1,
          agent_id: agentId,
          prompt: `task ${index + 1}`,
          label: 'work',
          schema_json: null,
          state,
          attempts: 0,
          value_json: null,
          error: state === 'failed' ? `failure ${index + 1}` : null,
          round: null,
          turn_ids_json: '[]',
          owner: null,
          job_id: null,
          claims: 0,
          heartbeat_at: null,
          created_at: now,
          finished_at: null,
        })),
      )
      .execute();
  }

  it('reads a page of 200 runs with their task counts and first failures in one statement', async () => {
    const agentId = 'many-runs';
    for (let index = 0; index < 200; index += 1) {
      const runId = `wf_page_${String(index).padStart(3, '0')}`;
      await createRun(runId, agentId, new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString());
      // Every tenth run has 12 failed tasks among 20; the others 3 tasks each.
      const states = index % 10 === 0 ? [...Array.from({ length: 12 }, () => 'failed'), 'succeeded', 'succeeded', 'running', 'queued', 'dispatched', 'cancelled', 'succeeded', 'failed'] : ['succeeded', 'running', 'queued'];
      await addTasks(runId, agentId, states);
    }
    const { value: runs, statements } = await counter.during(() => store.readRuns({ agentId, limit: 200 }));
    expect(statements).toBe(1);
    expect(runs).toHaveLength(200);
    expect(runs[0]?.run.id).toBe('wf_page_199');
    const busy = runs.find((summary) => summary.run.id === 'wf_page_190');
    expect(busy?.counts).toEqual({ total: 20, running: 3, succeeded: 3, failed: 13, cancelled: 1 });
    expect(busy?.failures.map((failure) => failure.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(busy?.failures[0]).toEqual({ seq: 1, label: 'work', error: 'failure 1' });
    const plain = runs.find((summary) => summary.run.id === 'wf_page_191');
    expect(plain).toMatchObject({ counts: { total: 3, running: 2, succeeded: 1, failed: 0, cancelled: 0 }, failures: [] });

    // One by id, and a run with no tasks yet, the same way.
    await createRun('wf_page_empty', 'another', new Date().toISOString());
    const { value: one, statements: forOne } = await counter.during(() => store.readRuns({ id: 'wf_page_empty', limit: 1 }));
    expect(forOne).toBe(1);
    expect(one).toMatchObject([{ run: { id: 'wf_page_empty' }, counts: { total: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 }, failures: [] }]);
  }, 120_000);

  it(`finds the end of a run, a job and a turn among ${EVENTS.toLocaleString('en')} events in one read`, async () => {
    const runId = 'wf_long';
    await createRun(runId, 'long', new Date().toISOString());
    const bodies = Array.from({ length: EVENTS - 1 }, (_, index) => ({ run_id: runId, seq: index + 2, type: index === EVENTS - 2 ? 'workflow.completed' : 'task.started', body: '{}' }));
    for (let start = 0; start < bodies.length; start += 1_000) await tables().insertInto('workflow_events').values(bodies.slice(start, start + 1_000)).execute();
    const { value: terminal, statements } = await counter.during(() => store.terminalEventSeq(runId));
    expect(statements).toBe(1);
    expect(terminal).toBe(EVENTS);

    const jobs = viewTables<BackgroundJobTables>(database).withPlugin(counter);
    await jobs
      .insertInto('background_jobs')
      .values({ id: 'job_long', agent_id: 'long', title: 'Long', instructions: 'Go on.', request_json: '{}', status: 'completed', output: 'done', error_json: null, message_count: 0, owner: null, heartbeat_at: null, source_turn_id: null, source_call_id: null, created_at: new Date().toISOString(), finished_at: null })
      .execute();
    const jobEvents = Array.from({ length: EVENTS }, (_, index) => ({ job_id: 'job_long', seq: index + 1, type: index === EVENTS - 1 ? 'job.completed' : 'job.message_queued', body: '{}' }));
    for (let start = 0; start < jobEvents.length; start += 1_000) await jobs.insertInto('background_job_events').values(jobEvents.slice(start, start + 1_000)).execute();
    const { value: ended, statements: forJob } = await counter.during(() => jobEndedBefore({ db: jobs, jobId: 'job_long', seq: EVENTS + 1 }));
    expect(forJob).toBe(1);
    expect(ended).toBe(true);
    expect(await jobEndedBefore({ db: jobs, jobId: 'job_long', seq: EVENTS })).toBe(false);

    // A turn's last event (what a background job reads to learn why its turn was cancelled).
    const turnId = 'turn_long';
    const now = new Date().toISOString();
    await database.db
      .insertInto('turns')
      .values({
        id: turnId,
        agent_id: 'long',
        kind: 'text',
        status: 'cancelled',
        model: 'scripted',
        created_at: now,
        finished_at: now,
        iterations: 0,
        output: null,
        result_json: null,
        error_json: null,
        outcome: null,
        input_tokens: 0,
        output_tokens: 0,
        owner: 'test',
        heartbeat_at: now,
        task_json: null,
        queued_at: null,
        queue_priority: null,
        queue_seq: null,
        background_job_id: null,
        schedule_id: null,
      })
      .execute();
    const turnEvents = Array.from({ length: EVENTS }, (_, index) => ({ turn_id: turnId, seq: index + 1, type: index === EVENTS - 1 ? 'turn.cancelled' : 'text.delta', body: index === EVENTS - 1 ? '{"reason":"shutdown"}' : '{}' }));
    for (let start = 0; start < turnEvents.length; start += 1_000) await database.db.insertInto('turn_events').values(turnEvents.slice(start, start + 1_000)).execute();
    expect(await turnStore.lastEvent(turnId)).toEqual({ seq: EVENTS, type: 'turn.cancelled', json: '{"reason":"shutdown"}' });
  }, 120_000);

  it('keeps an agent within its task limit when 12 steps of its runs dispatch at once', async () => {
    const agentId = 'limited';
    const runIds = Array.from({ length: 12 }, (_, index) => `wf_limit_${index}`);
    for (const runId of runIds) {
      await createRun(runId, agentId, new Date().toISOString());
      await addTasks(runId, agentId, ['queued', 'queued', 'queued']);
    }
    // Each step may dispatch all three of its run's tasks; the agent may have 5 out at once.
    const committed = await Promise.all(runIds.map((runId) => store.commitStep(runId, { version: 0, fed: [], round: 0, newTasks: [], dispatch: [1, 2, 3], agentTaskLimit: 5, cancelQueued: false, events: [], jobs: [] })));
    expect(committed.every(Boolean)).toBe(true);
    const out = await tables().selectFrom('workflow_tasks').select(['run_id', 'seq']).where('agent_id', '=', agentId).where('state', '=', 'dispatched').execute();
    expect(out).toHaveLength(5);

    // A settled task frees one slot and wakes the runs still waiting; the next step takes it.
    const [first] = out;
    expect(first).toBeDefined();
    await store.settleTask({ runId: first?.run_id ?? '', seq: first?.seq ?? 0, state: 'succeeded', attempts: 1, valueJson: '1', error: null, event: undefined });
    const waiting = runIds.find((runId) => !out.some((task) => task.run_id === runId)) ?? '';
    expect(await store.commitStep(waiting, { version: 1, fed: [], round: 0, newTasks: [], dispatch: [1, 2, 3], agentTaskLimit: 5, cancelQueued: false, events: [], jobs: [] })).toBe(true);
    const after = await tables().selectFrom('workflow_tasks').select('run_id').where('agent_id', '=', agentId).where('state', '=', 'dispatched').execute();
    expect(after).toHaveLength(5);
    expect(after.filter((task) => task.run_id === waiting)).toHaveLength(1);
  }, 60_000);
});
