import type { Kysely } from 'kysely';
import type { AdmissionQueries } from './admission-queries.js';
import type { Database } from './database-schema.js';
import type { ToolSetWriter } from './saved-tool-sets.js';
import type { NewTurn } from './turn-record.js';

/** Inserts a new turn's record and what it was given; `placement` says whether it waits in its agent's queue. */
export async function insertNewTurn(trx: Kysely<Database>, turn: NewTurn, toolSets: ToolSetWriter, queries: AdmissionQueries, placement?: TurnPlacement): Promise<void> {
  const { record } = turn;
  await queries.insertTurn.run(trx, {
    id: record.id,
    agent_id: record.agentId,
    kind: record.kind,
    status: placement?.status ?? record.status,
    model: record.model,
    created_at: record.createdAt,
    finished_at: null,
    iterations: 0,
    output: null,
    result_json: null,
    error_json: null,
    outcome: null,
    input_tokens: 0,
    output_tokens: 0,
    owner: turn.owner,
    heartbeat_at: placement?.heartbeatAt ?? record.createdAt,
    task_json: turn.task === undefined ? null : JSON.stringify(turn.task),
    queued_at: placement?.status === 'queued' ? record.createdAt : null,
    queue_priority: placement?.priority ?? null,
    queue_seq: placement?.seq ?? null,
    background_job_id: record.backgroundJobId ?? null,
    schedule_id: record.scheduleId ?? null,
  });
  const toolsHash = await toolSets.save(trx, turn.toolsJson);
  const providerHash = await toolSets.save(trx, turn.providerToolsJson);
  await queries.insertTurnTools.run(trx, { turnId: record.id, toolsHash, unavailableJson: turn.unavailableJson });
  await queries.insertProviderTools.run(trx, { turnId: record.id, iteration: 1, toolsHash: providerHash });
  if (turn.webhookUrl !== undefined) await trx.insertInto('turn_webhooks').values({ turn_id: record.id, url: turn.webhookUrl, created_at: record.createdAt, enqueued_at: null }).execute();
}

/** Where a new turn goes: straight to `running`, or into its agent's queue at (priority, seq). */
export interface TurnPlacement {
  readonly status: 'running' | 'queued';
  /** The turn's first heartbeat: when its transaction got a connection, which may be well after `createdAt`. */
  readonly heartbeatAt: string;
  readonly priority?: number;
  readonly seq?: number;
}
