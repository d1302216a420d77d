import type { Kysely, Transaction } from 'kysely';
import type { DurableWork, EnqueueOptions } from './durable-work.js';

/** Enqueues a job in the surrounding store transaction; null when a stately queue already has one waiting for the key. */
export type EnqueueWithin = (job: EnqueueOptions) => Promise<string | null>;

/**
 * Runs `write` in one store transaction in which it can also enqueue durable jobs: the state
 * change and the work it calls for commit together or not at all (a crash between them is
 * impossible). Once committed, this process's workers on those queues are woken.
 */
export async function transactionWithJobs<Tables, T>(
  options: { readonly db: Kysely<Tables>; readonly durable: DurableWork },
  write: (trx: Transaction<Tables>, enqueue: EnqueueWithin) => Promise<T>,
): Promise<T> {
  const { durable } = options;
  const queues = new Set<string>();
  const value = await options.db.transaction().execute((trx) =>
    write(trx, async (job) => {
      const id = await durable.enqueue(job, trx);
      if (id !== null) queues.add(job.queue);
      return id;
    }),
  );
  for (const queue of queues) durable.wake(queue);
  return value;
}
