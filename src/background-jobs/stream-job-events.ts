import type { Kysely } from 'kysely';
import { pause } from '../concurrency/wait.js';
import { JOB_TERMINAL_EVENTS, jobEndedBefore, listJobEvents, type StoredJobEvent } from './background-job-events.js';
import type { BackgroundJobTables } from './background-job-tables.js';

const EVENT_POLL_MS = 200;

/**
 * Delivers the job's events after `afterSeq`; with `follow`, keeps polling until the terminal
 * event (or `signal`). Webhook attempts come after the end: they are in later reads.
 */
export async function streamJobEvents(options: {
  readonly db: Kysely<BackgroundJobTables>;
  readonly jobId: string;
  readonly afterSeq: number;
  readonly follow: boolean;
  readonly signal: AbortSignal;
  readonly onEvent: (event: StoredJobEvent) => void;
}): Promise<void> {
  let afterSeq = options.afterSeq;
  for (;;) {
    const events = await listJobEvents({ db: options.db, jobId: options.jobId, afterSeq, limit: 500 });
    for (const event of events) {
      options.onEvent(event);
      afterSeq = event.seq;
      if (options.follow && JOB_TERMINAL_EVENTS.has(event.type)) return;
    }
    if (events.length === 500) continue;
    if (!options.follow || options.signal.aborted) return;
    if (await jobEndedBefore({ db: options.db, jobId: options.jobId, seq: options.afterSeq })) return;
    await pause(EVENT_POLL_MS, options.signal);
  }
}
