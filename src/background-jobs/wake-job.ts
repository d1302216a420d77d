import type { EnqueueOptions } from '../durable/durable-work.js';

export const WAKE_QUEUE = 'background-job-wake';

/** The job that has a background job claimed and driven (at most one waits per job). */
export const wakeJob = (jobId: string): EnqueueOptions => ({ queue: WAKE_QUEUE, payload: { jobId }, singletonKey: jobId });
