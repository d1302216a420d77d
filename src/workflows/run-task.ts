import { crashPoint } from '../durable/crash-points.js';
import type { DurableJob } from '../durable/durable-work.js';
import type { JsonObject } from '../json.js';
import { ServiceError } from '../service-error.js';
import type { TurnRecord } from '../store/turn-record.js';
import type { TurnRequest } from '../turns/turn-request.js';
import { taskId, taskKey, type EngineContext, type RunningTask } from './engine-context.js';
import { WORKFLOW_LIMITS } from './workflow-limits.js';
import { taskModelRequest, type WorkflowModel } from './workflow-model.js';
import { TERMINAL_TASK_STATES, type WorkflowRunRow, type WorkflowTaskRow } from './workflow-tables.js';

/** The task turn's agent as the run stored it. */
interface TaskAgent {
  readonly id: string;
  readonly instructions?: string;
  readonly tools?: { readonly web?: boolean; readonly brain?: boolean };
}

/** Thrown to have the job retried later: the task is not this worker's to run right now. */
class NotYet extends Error {}

/**
 * Runs one `agent()` call: up to 3 `workflow_task` turns through the turn service, stopping at
 * the first accepted result. Idempotent: a settled task is never run again; a task another
 * live worker is running is left to it (its own job retries if that worker dies); a task
 * whose worker stopped heart-beating (or was this process's previous life) is taken over.
 */
export async function runTask(context: EngineContext, job: DurableJob): Promise<void> {
  const runId = job.payload['runId'] as string;
  const seq = Number(job.payload['seq']);
  const { store } = context;
  const [run, task] = await Promise.all([store.getRun(runId), store.getTask(runId, seq)]);
  if (run === undefined || task === undefined || TERMINAL_TASK_STATES.has(task.state)) return;
  if (run.status !== 'running' || run.cancel_requested === 1) {
    // Settling wakes the run, in the same transaction.
    await settle(context, { runId, seq, state: 'cancelled', attempts: task.attempts, valueJson: null, error: null, event: undefined });
    return;
  }
  const key = taskKey(runId, seq);
  if (context.running.has(key)) {
    // This process runs the task. Its own job back (its lease ran out meanwhile) must not end:
    // if this process died after, no job would be left to take the task over.
    if (task.job_id === job.id) throw new NotYet(`task ${key} is still running here`);
    return;
  }
  if (task.state === 'running' && task.owner !== null && task.owner !== context.instanceId && heartbeatIsFresh(context, task)) {
    // Its worker is alive. If this is that worker's own job coming back (its lease ran out while
    // the turn still runs), retry later so the job outlives the worker; a duplicate job just ends.
    if (task.job_id === job.id) throw new NotYet(`task ${key} is still running on ${task.owner}`);
    return;
  }
  if (!(await store.claimTask({ runId, seq, claims: task.claims, owner: context.instanceId, jobId: job.id }))) return;
  const entry: RunningTask = { runId, seq, turn: undefined };
  context.running.set(key, entry);
  try {
    // Settling the task wakes its run and the agent's runs waiting for a slot, in one transaction.
    await attempts(context, run, task, entry);
  } finally {
    context.running.delete(key);
  }
  crashPoint('workflow.task-settled');
}

/** Settles the task, counting it when this call was the one that settled it. */
async function settle(context: EngineContext, options: Parameters<EngineContext['store']['settleTask']>[0]): Promise<void> {
  const state = await context.store.settleTask(options);
  if (state !== undefined) context.metrics.workflowTasks.inc({ outcome: state });
}

function heartbeatIsFresh(context: EngineContext, task: WorkflowTaskRow): boolean {
  if (task.heartbeat_at === null) return false;
  const staleAfterMs = (context.settings.taskLeaseSeconds * 1000) / 2;
  return context.clock.now().getTime() - Date.parse(task.heartbeat_at) < staleAfterMs;
}

async function attempts(context: EngineContext, run: WorkflowRunRow, task: WorkflowTaskRow, entry: RunningTask): Promise<void> {
  const { store } = context;
  const id = taskId(run.id, task.seq);
  const agent = JSON.parse(run.agent_json) as TaskAgent;
  const model = JSON.parse(run.model_json) as WorkflowModel;
  const wrapped = wrapSchema(task.schema_json);
  let lastError = task.error ?? 'no attempt ran';
  for (let attempt = task.attempts + 1; attempt <= WORKFLOW_LIMITS.attempts; attempt += 1) {
    const request: TurnRequest = {
      agent,
      kind: 'workflow_task',
      input: task.prompt,
      model: taskModelRequest({ model, label: task.label, attempt, prompt: task.prompt, seq: task.seq }),
      task: { instructions: task.prompt, resultSchema: wrapped.schema },
    };
    let ran: AttemptTurn;
    try {
      ran = await attemptTurn(context, { run, task, attempt, request, entry });
    } catch (error) {
      if (error instanceof NotYet) throw error;
      // A full or draining service is not the task's fault: the job comes back later.
      if (error instanceof ServiceError && error.statusCode >= 500) throw new NotYet(error.message);
      lastError = error instanceof Error ? error.message : String(error);
      await store.failAttempt({ runId: run.id, seq: task.seq, attempts: attempt, error: lastError, event: { type: 'task.failed', taskId: id, error: lastError, attempt, willRetry: attempt < WORKFLOW_LIMITS.attempts } });
      continue;
    }
    const { record } = ran;
    if (record.status === 'completed') {
      crashPoint('workflow.task-turn-ended');
      const value = wrapped.unwrap(record.result);
      const valueJson = JSON.stringify(value ?? null);
      if (Buffer.byteLength(valueJson) <= WORKFLOW_LIMITS.taskValueBytes) {
        await settle(context, { runId: run.id, seq: task.seq, state: 'succeeded', attempts: attempt, valueJson, error: null, event: { type: 'task.completed', taskId: id, value } });
        return;
      }
      lastError = `the submitted value is ${Buffer.byteLength(valueJson)} bytes of JSON; one task value may be at most ${WORKFLOW_LIMITS.taskValueBytes}`;
    } else if (record.status === 'cancelled' && cancelReason(record) === 'cancel_requested') {
      await settle(context, { runId: run.id, seq: task.seq, state: 'cancelled', attempts: attempt, valueJson: null, error: 'cancelled', event: undefined });
      return;
    } else {
      lastError = record.error === null ? `the task turn ended ${record.status}` : `${record.error.code}: ${record.error.message}`;
    }
    const willRetry = attempt < WORKFLOW_LIMITS.attempts;
    const event = { type: 'task.failed', taskId: id, error: lastError, attempt, willRetry } as const;
    if (willRetry) await store.failAttempt({ runId: run.id, seq: task.seq, attempts: attempt, error: lastError, event });
    else {
      await settle(context, { runId: run.id, seq: task.seq, state: 'failed', attempts: attempt, valueJson: null, error: lastError, event });
      return;
    }
    if ((await store.runsToStop([run.id])).length > 0) {
      await settle(context, { runId: run.id, seq: task.seq, state: 'cancelled', attempts: attempt, valueJson: null, error: 'cancelled', event: undefined });
      return;
    }
  }
  await settle(context, { runId: run.id, seq: task.seq, state: 'failed', attempts: WORKFLOW_LIMITS.attempts, valueJson: null, error: lastError, event: undefined });
}

/** The turn that made one attempt, and how it ended. */
interface AttemptTurn {
  readonly turnId: string;
  readonly record: TurnRecord;
}

/** Turns of one attempt that a shutdown or crash may cut off before the attempt counts as failed. */
const MAX_CUT_OFF_TURNS = 20;

/**
 * Runs the attempt's turn, or finds the one an earlier life of this task already ran. Each
 * turn is started under an idempotency key (run, seq, attempt, cut-off count), stored with the
 * turn before it starts, so a task taken over after a crash finds the turn that ran: one that
 * ended with a result is used as it is, never run again; one still running is waited for; one
 * that the crash or a shutdown cut off does not count, and the attempt runs under the next key.
 */
async function attemptTurn(
  context: EngineContext,
  options: { readonly run: WorkflowRunRow; readonly task: WorkflowTaskRow; readonly attempt: number; readonly request: TurnRequest; readonly entry: RunningTask },
): Promise<AttemptTurn> {
  const { run, task, attempt, request, entry } = options;
  const id = taskId(run.id, task.seq);
  for (let cutOff = 0; cutOff < MAX_CUT_OFF_TURNS; cutOff += 1) {
    const key = `${run.id}/${task.seq}/${attempt}${cutOff === 0 ? '' : `.${cutOff}`}`;
    const submission = await context.turns().submitTurn(request, { idempotency: { scope: 'workflow-task', key } });
    const turnId = submission.kind === 'started' ? submission.run.id : submission.turnId;
    // Recorded once: a turn found again (its earlier life stopped before it could say so) is shown started now.
    await context.store.startAttempt({ runId: run.id, seq: task.seq, turnId, event: { type: 'task.started', taskId: id, label: task.label, turnId, attempt } });
    if (submission.kind === 'started') {
      entry.turn = submission.run;
      context.metrics.workflowTaskAttempts.inc();
      await submission.run.done;
      entry.turn = undefined;
    }
    const record = await context.turns().getTurn(turnId);
    if (record.status === 'running' || record.status === 'queued' || record.status === 'requires_action') {
      throw new NotYet(`task ${id}'s turn ${turnId} is still running; it is waited for`);
    }
    if (record.status === 'interrupted' || (record.status === 'cancelled' && cancelReason(record) === 'shutdown')) {
      if (submission.kind === 'started') throw new NotYet('the service shut down during the task');
      continue;
    }
    return { turnId, record };
  }
  throw new Error(`task ${id}'s attempt ${attempt} was cut off by ${MAX_CUT_OFF_TURNS} shutdowns or crashes`);
}

/** Why a cancelled turn was cancelled (`cancel_requested`, `shutdown` …), from its stored error. */
function cancelReason(record: TurnRecord): string | undefined {
  return record.status === 'cancelled' ? record.error?.reason : undefined;
}

/**
 * A task turn's result schema must be an object (submit_result wraps it), so a call with no
 * schema (a string) or a non-object one submits `{"value": …}`, unwrapped here.
 */
export function wrapSchema(schemaJson: string | null): { schema: JsonObject; unwrap: (result: unknown) => unknown } {
  const schema = schemaJson === null ? { type: 'string' } : (JSON.parse(schemaJson) as JsonObject);
  if (schema['type'] === 'object') return { schema, unwrap: (result) => result };
  return {
    schema: { type: 'object', properties: { value: schema }, required: ['value'], additionalProperties: false },
    unwrap: (result) => (typeof result === 'object' && result !== null && 'value' in result ? result.value : null),
  };
}
