import type { Kysely } from 'kysely';
import type { TurnError, TurnEvent } from '../events/turn-events.js';
import type { Database } from './database-schema.js';
import { insertEvents } from './insert-events.js';

/**
 * Ends the turns left `running` or `queued` by a process that is gone (see
 * `TurnStore.interruptOrphans`): each gets a terminal `turn.failed` event with code
 * `interrupted` after its last stored one, in one transaction. Returns their ids.
 */
export async function interruptOrphans(db: Kysely<Database>, options: { readonly owner?: string | undefined; readonly staleBefore: string; readonly now: string }): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const orphans = await trx
      .selectFrom('turns')
      .select((eb) => [
        'id',
        'iterations',
        'input_tokens',
        'output_tokens',
        eb.selectFrom('turn_events').select((inner) => inner.fn.coalesce(inner.fn.max('seq'), inner.lit(0)).as('seq')).whereRef('turn_events.turn_id', '=', 'turns.id').as('last_seq'),
      ])
      .where('status', 'in', ['running', 'queued'])
      .where((eb) => eb.or([...(options.owner === undefined ? [] : [eb('owner', '=', options.owner)]), eb('heartbeat_at', '<', options.staleBefore)]))
      .execute();
    for (const orphan of orphans) {
      const error: TurnError = {
        code: 'interrupted',
        message: 'the process running this turn stopped before the turn finished',
      };
      const usage = { inputTokens: orphan.input_tokens, outputTokens: orphan.output_tokens };
      const event: TurnEvent = {
        type: 'turn.failed',
        turnId: orphan.id,
        seq: (orphan.last_seq ?? 0) + 1,
        at: options.now,
        error,
        iterations: orphan.iterations,
        usage,
      };
      await insertEvents(trx, orphan.id, [{ seq: event.seq, type: event.type, json: JSON.stringify(event) }]);
      await trx
        .updateTable('turns')
        .set({ status: 'interrupted', finished_at: options.now, error_json: JSON.stringify(error), outcome: 'interrupted' })
        .where('id', '=', orphan.id)
        .execute();
    }
    return orphans.map((orphan) => orphan.id);
  });
}
