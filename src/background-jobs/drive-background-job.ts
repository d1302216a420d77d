import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { pause } from '../concurrency/wait.js';
import { crashPoint } from '../durable/crash-points.js';
import { workRequestSchema } from '../turns/work-request.js';
import { ServiceError } from '../service-error.js';
import type { TurnStore } from '../store/turn-store.js';
import type { TurnRecord } from '../store/turn-record.js';
import type { StartTurnRequest } from '../turns/turn-origin.js';
import type { TurnRun } from '../turns/turn-run.js';
import type { StartTurnOptions, TurnSubmission } from '../turns/turn-service.js';
import { appendJobEvent } from './background-job-events.js';
import type { BackgroundJobTables } from './background-job-tables.js';
import { buildJobTurnInput, jobTurnModel } from './job-turn-input.js';

const POLL_MS = 300;
/** How long a job whose turn met a full service or a busy agent waits before it tries again. */
const BUSY_RETRY_MS = 1_000;

/** Starts turns: the turn service, seen from a job. */
export interface JobTurnStarter {
  submitTurn(request: StartTurnRequest, options: StartTurnOptions): Promise<TurnSubmission>;
}

/** How a driver ends its job: completed (if no message came since `messageCount`) or failed. */
export type JobFinishOutcome = { status: 'completed'; output: string | null; messageCount: number } | { status: 'failed'; error: { code: string; message: string } };

export interface JobDriverContext {
  readonly jobId: string;
  readonly db: Kysely<BackgroundJobTables>;
  readonly store: TurnStore;
  readonly turns: JobTurnStarter;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Aborts when this process stops driving jobs: the driver leaves the job for the next owner. */
  readonly signal: AbortSignal;
  /** Ends the job (completed | failed) if it still runs and, for completion, no message came since `messageCount`. */
  readonly finish: (outcome: JobFinishOutcome) => Promise<boolean>;
  /** Lets a local stop abort the running turn at once. */
  readonly setRunning: (run: TurnRun | undefined) => void;
}

type Settled = { outcome: 'completed' | 'interrupted' | 'stopped'; output: string | null } | { outcome: 'failed'; output: string | null; error: { code: string; message: string } };

type JobRow = Selectable<BackgroundJobTables['background_jobs']>;
type JobTurnRow = Selectable<BackgroundJobTables['background_job_turns']>;

/**
 * Drives one job to its end from whatever state it is stored in, so a driver that takes it over
 * after a crash at any instant goes on from there and never runs a turn twice: each turn is
 * recorded (its id, index and the messages it answers) before it starts, and started under that
 * id with an idempotency key; a recorded turn that never started is started, one that runs is
 * waited for, one that ended is settled. Then the job completes (its last turn completed and no
 * message waits), fails (a turn failed), or its next turn is recorded.
 */
export async function driveBackgroundJob(context: JobDriverContext): Promise<void> {
  const { db, jobId } = context;
  while (!context.signal.aborted) {
    const job = await db.selectFrom('background_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
    if (job?.status !== 'running') return;
    const turns = await db.selectFrom('background_job_turns').selectAll().where('job_id', '=', jobId).orderBy('turn_index').execute();
    const last = turns.at(-1);
    if (last !== undefined && last.outcome === null) {
      let run: TurnRun | undefined;
      if ((await context.store.getTurn(last.turn_id)) === undefined) {
        const started = await startRecordedTurn(context, job, turns, last);
        if (started.kind === 'stop') return;
        if (started.kind === 'retry') continue;
        if (started.kind === 'failed') {
          await context.finish({ status: 'failed', error: started.error });
          return;
        }
        run = started.run;
      }
      context.setRunning(run);
      const settled = await settleTurn(context, last.turn_id, run);
      context.setRunning(undefined);
      if (settled === undefined) return;
      crashPoint('background-job.turn-ended');
      await recordSettled(context, last.turn_index, last.turn_id, settled);
      crashPoint('background-job.turn-settled');
      if (settled.outcome === 'failed') {
        await context.finish({ status: 'failed', error: settled.error });
        return;
      }
      continue;
    }
    if (last?.outcome === 'failed') {
      // Recorded as failed, but the job did not end (a crash came between): end it now, saying why.
      const settled = await settleTurn(context, last.turn_id, undefined);
      if (settled === undefined) return;
      await context.finish({ status: 'failed', error: settled.outcome === 'failed' ? settled.error : { code: 'turn_failed', message: `turn ${last.turn_id} failed` } });
      return;
    }
    if (last !== undefined && last.outcome !== 'completed' && last.outcome !== 'interrupted') return;
    if (last?.outcome === 'completed') {
      const waiting = await db.selectFrom('background_job_messages').select((eb) => eb.fn.countAll().as('count')).where('job_id', '=', jobId).where('turn_index', 'is', null).executeTakeFirst();
      if (Number(waiting?.count ?? 0) === 0) {
        if (await context.finish({ status: 'completed', output: last.output, messageCount: job.message_count })) return;
        continue;
      }
    }
    await recordNextTurn(context, (last?.turn_index ?? 0) + 1);
    crashPoint('background-job.turn-recorded');
  }
}

/** Records the next turn before it starts: its id and index, the messages waiting for it, and its `job.turn_started` event, in one transaction. */
async function recordNextTurn(context: JobDriverContext, index: number): Promise<void> {
  const { jobId } = context;
  const turnId = `turn_${randomUUID().replaceAll('-', '')}`;
  await context.db.transaction().execute(async (trx) => {
    await trx.updateTable('background_job_messages').set({ turn_index: index }).where('job_id', '=', jobId).where('turn_index', 'is', null).execute();
    const messages = await trx.selectFrom('background_job_messages').select('id').where('job_id', '=', jobId).where('turn_index', '=', index).orderBy('created_at').orderBy('id').execute();
    await trx.insertInto('background_job_turns').values({ job_id: jobId, turn_index: index, turn_id: turnId, outcome: null, output: null }).execute();
    await appendJobEvent({ db: trx, clock: context.clock, jobId, body: { type: 'job.turn_started', turnId, turnIndex: index, messageIds: messages.map((message) => message.id) } });
  });
}

type Started = { kind: 'started'; run: TurnRun | undefined } | { kind: 'retry' } | { kind: 'stop' } | { kind: 'failed'; error: { code: string; message: string } };

/**
 * Starts a recorded turn under its recorded id and the key (job, index): a second start (another
 * driver, or this one after a crash) finds the same turn instead of running it twice. A full
 * service or a busy agent is waited out; a shutdown leaves the job to the next owner.
 */
async function startRecordedTurn(context: JobDriverContext, job: JobRow, turns: readonly JobTurnRow[], turn: JobTurnRow): Promise<Started> {
  const { db, jobId } = context;
  const index = turn.turn_index;
  const messages = await db.selectFrom('background_job_messages').select(['text', 'turn_index']).where('job_id', '=', jobId).where('turn_index', '<=', index).orderBy('created_at').orderBy('id').execute();
  const messagesByTurn = new Map<number, string[]>();
  for (const message of messages) {
    const list = messagesByTurn.get(Number(message.turn_index)) ?? [];
    list.push(message.text);
    messagesByTurn.set(Number(message.turn_index), list);
  }
  const request = workRequestSchema.parse(JSON.parse(job.request_json));
  try {
    const submission = await context.turns.submitTurn(
      {
        agent: request.agent,
        kind: 'text',
        input: buildJobTurnInput({
          title: job.title,
          instructions: job.instructions,
          earlier: turns.filter((earlier) => earlier.turn_index < index).map((earlier) => ({ index: earlier.turn_index, outcome: earlier.outcome, output: earlier.output })),
          messagesByTurn,
          index,
        }),
        model: jobTurnModel(request.model, index),
        origin: { backgroundJobId: jobId },
      },
      { turnId: turn.turn_id, idempotency: { scope: 'background-job', key: `${jobId}/${index}` } },
    );
    return { kind: 'started', run: submission.kind === 'started' ? submission.run : undefined };
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'shutting_down') return { kind: 'stop' };
    if (error instanceof ServiceError && (error.code === 'overloaded' || error.code === 'agent_busy')) {
      // The agent's other turns or the service's load are not the job's fault: it waits its turn.
      await pause(BUSY_RETRY_MS, context.signal);
      return { kind: 'retry' };
    }
    if (!(error instanceof ServiceError)) context.logger.error({ err: error, jobId }, 'could not start a job turn');
    return { kind: 'failed', error: error instanceof ServiceError ? { code: error.code, message: error.message } : { code: 'turn_start_failed', message: 'the next turn of the job could not be started' } };
  }
}

/**
 * Waits for the turn to end (from memory when it runs here, else by reading its record) while
 * watching for a stop from any replica, then says how it ended for the job. Undefined when this
 * process stops driving meanwhile.
 */
async function settleTurn(context: JobDriverContext, turnId: string, run: TurnRun | undefined): Promise<Settled | undefined> {
  const { db, jobId } = context;
  let record: TurnRecord | undefined;
  for (;;) {
    if (run !== undefined) {
      await Promise.race([run.done, pause(POLL_MS)]);
      if (run.finished) await run.done;
    } else {
      await pause(POLL_MS, context.signal);
    }
    record = await context.store.getTurn(turnId);
    if (record === undefined) return { outcome: 'interrupted', output: null };
    // Ended (a turn that waits behind the agent's other turns has not).
    if (record.finishedAt !== null) break;
    const job = await db.selectFrom('background_jobs').select('status').where('id', '=', jobId).executeTakeFirst();
    if (job?.status !== 'running') run?.cancel('cancel_requested');
    if (context.signal.aborted && run === undefined) return undefined;
  }
  if (record.status === 'completed') return { outcome: 'completed', output: record.output };
  if (record.status === 'interrupted') return { outcome: 'interrupted', output: record.output };
  if (record.status === 'failed') {
    return { outcome: 'failed', output: record.output, error: { code: 'turn_failed', message: `turn ${turnId} failed: ${record.error?.message ?? 'unknown error'}` } };
  }
  const reason = await cancelReason(context.store, turnId);
  if (reason === 'shutdown') return { outcome: 'interrupted', output: record.output };
  const job = await db.selectFrom('background_jobs').select('status').where('id', '=', jobId).executeTakeFirst();
  if (job?.status === 'stopped') return { outcome: 'stopped', output: record.output };
  const why = reason === 'timeout' ? 'ran out of time' : `was cancelled (${reason ?? 'unknown reason'})`;
  return { outcome: 'failed', output: record.output, error: { code: 'turn_cancelled', message: `turn ${turnId} ${why}` } };
}

async function cancelReason(store: TurnStore, turnId: string): Promise<string | undefined> {
  const terminal = await store.lastEvent(turnId);
  if (terminal?.type !== 'turn.cancelled') return undefined;
  const parsed = JSON.parse(terminal.json) as { reason?: unknown };
  return typeof parsed.reason === 'string' ? parsed.reason : undefined;
}

/** Records how the turn ended, with its `job.turn_finished` event, in one transaction. */
async function recordSettled(context: JobDriverContext, index: number, turnId: string, settled: Settled): Promise<void> {
  const { jobId } = context;
  await context.db.transaction().execute(async (trx) => {
    await trx.updateTable('background_job_turns').set({ outcome: settled.outcome, output: settled.output }).where('job_id', '=', jobId).where('turn_index', '=', index).execute();
    await appendJobEvent({ db: trx, clock: context.clock, jobId, body: { type: 'job.turn_finished', turnId, turnIndex: index, outcome: settled.outcome, output: settled.output } });
  });
}
