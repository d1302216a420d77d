import type { Kysely } from 'kysely';
import type { TurnKind } from '../events/turn-events.js';
import type { Database } from './database-schema.js';
import type { TurnToolsRecord } from './turn-record.js';

/** What a turn was given (`GET /turns/:id/tools`): its tool snapshot and each provider tool list, from the deduplicated tool sets. */
export async function readTurnTools(db: Kysely<Database>, turnId: string): Promise<TurnToolsRecord | undefined> {
  const turn = await db.selectFrom('turns').select(['kind']).where('id', '=', turnId).executeTakeFirst();
  if (turn === undefined) return undefined;
  const tools = await db
    .selectFrom('turn_tools')
    .innerJoin('tool_sets', 'tool_sets.hash', 'turn_tools.tools_hash')
    .select(['tool_sets.json as tools_json', 'turn_tools.unavailable_json as unavailable_json'])
    .where('turn_tools.turn_id', '=', turnId)
    .executeTakeFirst();
  const providerTools = await db
    .selectFrom('turn_provider_tools')
    .innerJoin('tool_sets', 'tool_sets.hash', 'turn_provider_tools.tools_hash')
    .select(['turn_provider_tools.iteration as iteration', 'tool_sets.json as tools_json'])
    .where('turn_provider_tools.turn_id', '=', turnId)
    .orderBy('turn_provider_tools.iteration')
    .execute();
  return {
    turnId,
    kind: turn.kind as TurnKind,
    toolsJson: tools?.tools_json ?? '[]',
    unavailableJson: tools?.unavailable_json ?? '[]',
    providerTools: providerTools.map((row) => ({ iteration: row.iteration, json: row.tools_json })),
  };
}
