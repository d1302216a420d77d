import { ServiceError } from '../service-error.js';
import { checkClosedSchema } from './check-closed-schema.js';
import { crashPoint } from '../durable/crash-points.js';
import { taskId, type EngineContext } from './engine-context.js';
import type { GuestCall, ReplayOutcome } from './script/replay-protocol.js';
import { runWebhook } from './run-webhook.js';
import type { WorkflowEventBody } from './workflow-events.js';
import { WORKFLOW_LIMITS } from './workflow-limits.js';
import { advanceJob } from './workflow-queues.js';
import type { NewTask, StepWrite } from './workflow-store.js';
import { TERMINAL_TASK_STATES, type WorkflowRunRow, type WorkflowTaskRow } from './workflow-tables.js';

/** Steps taken in one job when calls settle at once (bad schemas): bounded, the next job goes on. */
const MAX_STEPS_PER_JOB = 16;

/**
 * One step of a run: replay the script from its stored results (feeding the results that
 * settled since the last step as a new round), check that it asks for the same calls as
 * before, store the new calls, dispatch as many as the limits allow, or end the run. Written
 * with the run's version, so two steps never both commit; a lost race throws and is retried.
 */
export async function advanceRun(context: EngineContext, runId: string): Promise<void> {
  for (let step = 0; step < MAX_STEPS_PER_JOB; step += 1) {
    const again = await stepOnce(context, runId);
    if (!again) return;
  }
  await context.durable.enqueue(advanceJob(runId));
}

async function stepOnce(context: EngineContext, runId: string): Promise<boolean> {
  const { store } = context;
  const run = await store.getRun(runId);
  if (run === undefined || run.status !== 'running') return false;
  const tasks = await store.listTasks(runId);
  if (run.cancel_requested === 1) {
    if (tasks.some((task) => task.state === 'running')) {
      await commit(context, run, { version: run.version, fed: [], round: run.round, newTasks: [], dispatch: [], cancelQueued: true, events: [], jobs: [] });
      return false;
    }
    await finish(context, run, { status: 'cancelled', resultJson: null, errorJson: null }, { type: 'workflow.cancelled' }, run.round);
    return false;
  }

  const { rounds, fresh } = feedRounds(tasks);
  const outcome = await context.scripts.replay({
    script: run.script,
    argsJson: run.args_json,
    seed: run.seed,
    nowMs: Date.parse(run.created_at),
    rounds: fresh.length === 0 ? rounds : [...rounds, fresh.map(fedResult)],
    memoryLimitBytes: context.settings.scriptMemoryBytes,
    cpuLimitMs: context.settings.scriptCpuMs,
  });
  const round = fresh.length === 0 ? run.round : run.round + 1;
  const fed = fresh.map((task) => task.seq);

  const problem = checkCalls(outcome, tasks, run.max_agent_calls);
  if (problem !== undefined) {
    await finish(context, run, { status: 'failed', resultJson: null, errorJson: JSON.stringify(problem) }, { type: 'workflow.failed', error: problem }, round, fed);
    return false;
  }
  if (outcome.kind === 'returned') {
    if (Buffer.byteLength(outcome.resultJson) > WORKFLOW_LIMITS.resultBytes) {
      const error = { code: 'result_too_large', message: `the result is ${Buffer.byteLength(outcome.resultJson)} bytes of JSON; at most ${WORKFLOW_LIMITS.resultBytes} are kept` };
      await finish(context, run, { status: 'failed', resultJson: null, errorJson: JSON.stringify(error) }, { type: 'workflow.failed', error }, round, fed);
      return false;
    }
    const result: unknown = JSON.parse(outcome.resultJson);
    await finish(context, run, { status: 'completed', resultJson: outcome.resultJson, errorJson: null }, { type: 'workflow.completed', result }, round, fed);
    return false;
  }
  if (outcome.kind !== 'waiting') {
    const code = outcome.kind === 'threw' ? 'script_error' : outcome.kind === 'out_of_time' ? 'script_timeout' : outcome.kind === 'out_of_memory' ? 'script_out_of_memory' : 'script_not_deterministic';
    const error = { code, message: outcome.message };
    await finish(context, run, { status: 'failed', resultJson: null, errorJson: JSON.stringify(error) }, { type: 'workflow.failed', error }, round, fed);
    return false;
  }

  const known = new Set(tasks.map((task) => task.seq));
  const events: WorkflowEventBody[] = [];
  const newTasks: NewTask[] = outcome.calls.filter((call) => !known.has(call.seq)).map((call) => newTask(run.id, call, events));
  const settledNow = newTasks.some((task) => task.state !== 'queued');
  const dispatch = slotsFor(run, [...tasks, ...newTasks.map((task) => ({ ...task, round: null }) as WorkflowTaskRow)]);
  // The dispatched tasks' jobs are written with the step.
  await commit(context, run, { version: run.version, fed, round, newTasks, dispatch, cancelQueued: false, events, jobs: [] });
  return settledNow;
}

/** Settled results by the round they were fed in, and those settled since (fed in seq order as the next round). */
function feedRounds(tasks: readonly WorkflowTaskRow[]): { rounds: { seq: number; valueJson: string }[][]; fresh: WorkflowTaskRow[] } {
  const byRound = new Map<number, WorkflowTaskRow[]>();
  const fresh: WorkflowTaskRow[] = [];
  for (const task of tasks) {
    if (task.round !== null) byRound.set(task.round, [...(byRound.get(task.round) ?? []), task]);
    else if (TERMINAL_TASK_STATES.has(task.state)) fresh.push(task);
  }
  const rounds = [...byRound.entries()].sort(([a], [b]) => a - b).map(([, members]) => members.map(fedResult));
  return { rounds, fresh };
}

function fedResult(task: WorkflowTaskRow): { seq: number; valueJson: string } {
  return { seq: task.seq, valueJson: task.state === 'succeeded' ? (task.value_json ?? 'null') : 'null' };
}

/** The replay must ask for the stored calls again, word for word, and stay within the run's call budget. */
function checkCalls(outcome: ReplayOutcome, tasks: readonly WorkflowTaskRow[], maxCalls: number): { code: string; message: string } | undefined {
  const stored = new Map(tasks.map((task) => [task.seq, task]));
  for (const call of outcome.calls) {
    const task = stored.get(call.seq);
    if (task !== undefined && (task.prompt !== call.prompt || task.label !== call.label || task.schema_json !== call.schemaJson)) {
      return {
        code: 'script_not_deterministic',
        message: `the script is not deterministic: agent() call #${call.seq} asked for ${describe(call)} on replay, but the stored call was ${describe({ prompt: task.prompt, label: task.label })}`,
      };
    }
    if (call.seq > maxCalls) return { code: 'max_agent_calls_exceeded', message: `the script made more than ${maxCalls} agent() calls (maxAgentCalls)` };
  }
  return undefined;
}

function describe(call: Pick<GuestCall, 'prompt' | 'label'>): string {
  const prompt = call.prompt.length > 80 ? `${call.prompt.slice(0, 80)}…` : call.prompt;
  return `${call.label === null ? '' : `“${call.label}” `}(${JSON.stringify(prompt)})`;
}

function newTask(runId: string, call: GuestCall, events: WorkflowEventBody[]): NewTask {
  const base = { seq: call.seq, prompt: call.prompt, label: call.label, schema_json: call.schemaJson, value_json: null, error: null };
  const problem = call.schemaJson === null ? undefined : checkClosedSchema(JSON.parse(call.schemaJson));
  if (problem === undefined) return { ...base, state: 'queued' };
  const error = `a bad schema, so no model was called: ${problem}`;
  events.push({ type: 'task.failed', taskId: taskId(runId, call.seq), error, attempt: 0, willRetry: false });
  return { ...base, state: 'failed', value_json: 'null', error };
}

/** Queued calls to dispatch now, within the run's concurrency (the store lets through as many as the agent's limit allows). */
function slotsFor(run: WorkflowRunRow, tasks: readonly WorkflowTaskRow[]): number[] {
  const busy = tasks.filter((task) => task.state === 'dispatched' || task.state === 'running').length;
  const free = run.concurrency - busy;
  if (free <= 0) return [];
  return tasks.filter((task) => task.state === 'queued').slice(0, free).map((task) => task.seq);
}

async function commit(context: EngineContext, run: WorkflowRunRow, write: Omit<StepWrite, 'agentTaskLimit'>): Promise<void> {
  const committed = await context.store.commitStep(run.id, { ...write, agentTaskLimit: context.settings.runningTasksPerAgent });
  if (committed) crashPoint('workflow.step-committed');
  // Another step of this run committed first (a takeover racing a slow replica): try again from the new state.
  if (!committed) throw new ServiceError({ statusCode: 409, code: 'workflow_step_conflict', message: `run ${run.id} moved on meanwhile; stepping again` });
}

async function finish(
  context: EngineContext,
  run: WorkflowRunRow,
  outcome: NonNullable<StepWrite['finish']>,
  event: WorkflowEventBody,
  round: number,
  fed: readonly number[] = [],
): Promise<void> {
  // The run's webhook is stored with its end.
  const webhook = runWebhook(context, run, outcome.status);
  await commit(context, run, { version: run.version, fed, round, newTasks: [], dispatch: [], cancelQueued: true, finish: outcome, events: [event], jobs: webhook === undefined ? [] : [webhook] });
  crashPoint('workflow.finished');
}
