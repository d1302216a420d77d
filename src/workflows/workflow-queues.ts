import type { EnqueueOptions } from '../durable/durable-work.js';

export const ADVANCE_QUEUE = 'workflow-advance';
export const TASK_QUEUE = 'workflow-task';

/** The job that takes a run's next step (at most one waits per run; a running one is followed by it). */
export const advanceJob = (runId: string): EnqueueOptions => ({ queue: ADVANCE_QUEUE, payload: { runId }, singletonKey: runId });

/** The job that runs one dispatched `agent()` call. */
export const taskJob = (runId: string, seq: number): EnqueueOptions => ({ queue: TASK_QUEUE, payload: { runId, seq } });
