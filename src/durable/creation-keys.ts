import { sql, type QueryExecutorProvider } from 'kysely';
import { ServiceError } from '../service-error.js';

/** What durable work an `Idempotency-Key` can make: each kind has its own keys. */
export type CreationKind = 'workflow' | 'background_job' | 'schedule';

/** An `Idempotency-Key` on a create, with who sent it and a digest of the body it came with. */
export interface CreationKey {
  readonly scope: string;
  readonly key: string;
  readonly bodyHash: string;
}

/** What a create did: made the resource, or answered the one an earlier request with its key made. */
export interface Creation<T> {
  readonly record: T;
  readonly replayed: boolean;
}

const NAMES: Record<CreationKind, string> = { workflow: 'workflow run', background_job: 'background job', schedule: 'schedule' };

/**
 * Inside the transaction that creates a resource, before it does: claims `key` for
 * `resourceId`, and answers undefined when it was free (create it) or the id an earlier
 * request with the same key and body made (create nothing; answer that one). The same key
 * with another body is `422 idempotency_key_reused`. Concurrent requests with one key meet at
 * the primary key: on PostgreSQL the later insert waits for the earlier transaction and then
 * finds its row; SQLite writes one transaction at a time.
 *
 * Plain SQL (the same on both stores), so any part's transaction can run it.
 */
export async function claimCreationKey(
  trx: QueryExecutorProvider,
  options: { readonly kind: CreationKind; readonly key: CreationKey; readonly resourceId: string; readonly createdAt: string },
): Promise<string | undefined> {
  const { kind, key } = options;
  const inserted = await sql`
    insert into creation_keys (scope, kind, key, body_hash, resource_id, created_at)
    values (${key.scope}, ${kind}, ${key.key}, ${key.bodyHash}, ${options.resourceId}, ${options.createdAt})
    on conflict do nothing`.execute(trx);
  if (Number(inserted.numAffectedRows ?? 0n) === 1) return undefined;
  const { rows } = await sql<{ resource_id: string; body_hash: string }>`
    select resource_id, body_hash from creation_keys where scope = ${key.scope} and kind = ${kind} and key = ${key.key}`.execute(trx);
  const earlier = rows[0];
  // Pruned between the two statements (kept 24 h at least): the key is free again.
  if (earlier === undefined) return claimCreationKey(trx, options);
  if (earlier.body_hash !== key.bodyHash) {
    throw new ServiceError({
      statusCode: 422,
      code: 'idempotency_key_reused',
      message: `this Idempotency-Key already made ${NAMES[kind]} "${earlier.resource_id}" with a different request body; use a new key for a new request`,
    });
  }
  return earlier.resource_id;
}
