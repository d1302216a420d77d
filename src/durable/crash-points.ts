/**
 * Named points where durable work's state changes meet: a test starts a service process with
 * `TEST_CRASH_AT=<point>` (and NODE_ENV=test; the service refuses it otherwise) and the process
 * kills itself with SIGKILL the first time it reaches that point, exactly as a crash there
 * would. Then the test restarts the service and shows the work completes once. Unarmed (every
 * production process), a point is one Set lookup.
 */
export const CRASH_POINTS = [
  /** A workflow run and its first step's job are stored; the HTTP answer or tool output is not sent yet. */
  'workflow.created',
  /** A workflow step is committed (tasks dispatched, or the run ended); its job has not completed. */
  'workflow.step-committed',
  /** A task turn ended with an accepted result; the task is not settled yet. */
  'workflow.task-turn-ended',
  /** A task is settled; its job has not completed. */
  'workflow.task-settled',
  /** A run has ended, with its webhook's job; the step's job has not completed. */
  'workflow.finished',
  /** A background job is stored with its wake job; the answer is not sent yet. */
  'background-job.created',
  /** A background job's next turn is recorded (id, index, messages); the turn has not started. */
  'background-job.turn-recorded',
  /** A background job's turn has ended; the job has not recorded how. */
  'background-job.turn-ended',
  /** A background job recorded how its turn ended; the job has not ended or gone on. */
  'background-job.turn-settled',
  /** A background job ended with its event and webhook; its driver has not returned. */
  'background-job.finished',
  /** A schedule fire is claimed (recorded with its turn's id, its start job and the next fire's job); nothing started yet. */
  'schedule.fire-claimed',
  /** A fire's turn has started; the fire is not recorded started yet. */
  'schedule.fire-turn-started',
  /** A turn with a webhook has ended and is stored so; its webhook is not queued yet. */
  'turn.ended',
] as const;

export type CrashPoint = (typeof CRASH_POINTS)[number];

const armed = new Set<string>();

/** Arms the named points for this process; an unknown name is refused, with the names there are. */
export function armCrashPoints(names: readonly string[]): void {
  const known = new Set<string>(CRASH_POINTS);
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) throw new Error(`TEST_CRASH_AT: no crash point named ${unknown.join(', ')}; there are ${CRASH_POINTS.join(', ')}`);
  for (const name of names) armed.add(name);
}

/** Dies here, at once and with nothing cleaned up, when the point is armed. */
export function crashPoint(point: CrashPoint): void {
  if (!armed.has(point)) return;
  process.kill(process.pid, 'SIGKILL');
  // The signal is delivered before anything else of this process runs; block until it is.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
}
