import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { pause } from '../concurrency/wait.js';
import { workRequestSchema } from '../turns/work-request.js';
import { ServiceError } from '../service-error.js';
import type { TurnStore } from '../store/turn-store.js';
import type { TurnRecord } from '../store/turn-record.js';
import type { StartTurnRequest } from '../turns/turn-origin.js';
import type { TurnRun } from '../turns/turn-run.js';
import type { BackgroundJobEventBody } from './background-job-events.js';
import type { BackgroundJobTables } from './background-job-tables.js';
import { buildJobTurnInput, jobTurnModel } from './job-turn-input.js';

const POLL_MS = 300;
const OVERLOADED_RETRY_MS = 1_000;

/** Starts turns: the turn service, seen from a job. */
export interface JobTurnStarter {
  startTurn(request: StartTurnRequest): Promise<TurnRun>;
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
  readonly emit: (body: BackgroundJobEventBody) => Promise<void>;
  /** Ends the job (completed | failed) if it still runs and, for completion, no message came since `messageCount`. */
  readonly finish: (outcome: JobFinishOutcome) => Promise<boolean>;
  /** Lets a local stop abort the running turn at once. */
  readonly setRunning: (run: TurnRun | undefined) => void;
}

type Settled = { outcome: 'completed' | 'interrupted' | 'stopped'; output: string | null } | { outcome: 'failed'; output: string | null; error: { code: string; message: string } };

/**
 * Drives one job to its end from whatever state it is stored in: settles a turn that was left
 * unfinished (waiting for it while another process still runs it), then either completes the
 * job (no message waiting) or starts the next turn with the messages queued meanwhile.
 */
export async function driveBackgroundJob(context: JobDriverContext): Promise<void> {
  const { db, jobId } = context;
  while (!context.signal.aborted) {
    const job = await db.selectFrom('background_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
    if (job?.status !== 'running') return;
    const turns = await db.selectFrom('background_job_turns').selectAll().where('job_id', '=', jobId).orderBy('turn_index').execute();
    const last = turns.at(-1);
    if (last !== undefined && last.outcome === null) {
      const settled = await settleTurn(context, last.turn_id, undefined);
      if (settled === undefined) return;
      await recordSettled(context, last.turn_index, last.turn_id, settled);
      if (settled.outcome === 'failed') {
        await context.finish({ status: 'failed', error: settled.error });
        return;
      }
      continue;
    }
    if (last !== undefined && last.outcome !== 'completed' && last.outcome !== 'interrupted') return;
    const index = (last === undefined ? 0 : last.turn_index) + 1;
    await db.updateTable('background_job_messages').set({ turn_index: index }).where('job_id', '=', jobId).where('turn_index', 'is', null).execute();
    const messages = await db.selectFrom('background_job_messages').select(['id', 'text', 'turn_index']).where('job_id', '=', jobId).where('turn_index', 'is not', null).orderBy('created_at').orderBy('id').execute();
    const current = messages.filter((message) => Number(message.turn_index) === index);
    if (last !== undefined && last.outcome === 'completed' && current.length === 0) {
      if (await context.finish({ status: 'completed', output: last.output, messageCount: job.message_count })) return;
      continue;
    }
    const messagesByTurn = new Map<number, string[]>();
    for (const message of messages) {
      const list = messagesByTurn.get(Number(message.turn_index)) ?? [];
      list.push(message.text);
      messagesByTurn.set(Number(message.turn_index), list);
    }
    const request = workRequestSchema.parse(JSON.parse(job.request_json));
    let run: TurnRun;
    try {
      run = await context.turns.startTurn({
        agent: request.agent,
        kind: 'text',
        input: buildJobTurnInput({
          title: job.title,
          instructions: job.instructions,
          earlier: turns.map((turn) => ({ index: turn.turn_index, outcome: turn.outcome, output: turn.output })),
          messagesByTurn,
          index,
        }),
        model: jobTurnModel(request.model, index),
        origin: { backgroundJobId: jobId },
      });
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'shutting_down') return;
      if (error instanceof ServiceError && error.code === 'overloaded') {
        await pause(OVERLOADED_RETRY_MS, context.signal);
        continue;
      }
      const failure = error instanceof ServiceError ? { code: error.code, message: error.message } : { code: 'turn_start_failed', message: 'the next turn of the job could not be started' };
      if (!(error instanceof ServiceError)) context.logger.error({ err: error, jobId }, 'could not start a job turn');
      await context.finish({ status: 'failed', error: failure });
      return;
    }
    await db.insertInto('background_job_turns').values({ job_id: jobId, turn_index: index, turn_id: run.id, outcome: null, output: null }).execute();
    await context.emit({ type: 'job.turn_started', turnId: run.id, turnIndex: index, messageIds: current.map((message) => message.id) });
    context.setRunning(run);
    const settled = await settleTurn(context, run.id, run);
    context.setRunning(undefined);
    if (settled === undefined) return;
    await recordSettled(context, index, run.id, settled);
    if (settled.outcome === 'failed') {
      await context.finish({ status: 'failed', error: settled.error });
      return;
    }
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
  const events = await store.listEvents(turnId, { afterSeq: 0, limit: 100_000 });
  const terminal = events.at(-1);
  if (terminal?.type !== 'turn.cancelled') return undefined;
  const parsed = JSON.parse(terminal.json) as { reason?: unknown };
  return typeof parsed.reason === 'string' ? parsed.reason : undefined;
}

async function recordSettled(context: JobDriverContext, index: number, turnId: string, settled: Settled): Promise<void> {
  await context.db.updateTable('background_job_turns').set({ outcome: settled.outcome, output: settled.output }).where('job_id', '=', context.jobId).where('turn_index', '=', index).execute();
  await context.emit({ type: 'job.turn_finished', turnId, turnIndex: index, outcome: settled.outcome, output: settled.output });
}
