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
      .select(['id', 'iterations', 'input_tokens', 'output_tokens'])
      .where('status', 'in', ['running', 'queued'])
      .where((eb) => eb.or([...(options.owner === undefined ? [] : [eb('owner', '=', options.owner)]), eb('heartbeat_at', '<', options.staleBefore)]))
      .execute();
    const ended: string[] = [];
    const error: TurnError = { code: 'interrupted', message: 'the process running this turn stopped before the turn finished' };
    for (const orphan of orphans) {
      // Ended here only if still live: another replica's sweep may have ended it meanwhile (on
      // PostgreSQL this waits for that sweep's transaction and then finds it ended). Only the
      // sweep that ended it appends its terminal event, after the last one stored by then.
      const claimed = await trx
        .updateTable('turns')
        .set({ status: 'interrupted', finished_at: options.now, error_json: JSON.stringify(error), outcome: 'interrupted' })
        .where('id', '=', orphan.id)
        .where('status', 'in', ['running', 'queued'])
        .executeTakeFirst();
      if (claimed.numUpdatedRows === 0n) continue;
      const last = await trx.selectFrom('turn_events').select((eb) => eb.fn.max('seq').as('seq')).where('turn_id', '=', orphan.id).executeTakeFirst();
      const event: TurnEvent = {
        type: 'turn.failed',
        turnId: orphan.id,
        seq: (last?.seq ?? 0) + 1,
        at: options.now,
        error,
        iterations: orphan.iterations,
        usage: { inputTokens: orphan.input_tokens, outputTokens: orphan.output_tokens },
      };
      await insertEvents(trx, orphan.id, [{ seq: event.seq, type: event.type, json: JSON.stringify(event) }]);
      ended.push(orphan.id);
    }
    return ended;
  });
}
