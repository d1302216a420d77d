import type { TurnError, TurnKind } from '../events/turn-events.js';
import type { TurnsTable } from './database-schema.js';
import type { TurnRecord, TurnStatus } from './turn-record.js';

/** A `turns` row as the record `GET /turns/:id` shows (without its pending approvals). */
export function toTurnRecord(row: TurnsTable): TurnRecord {
  return {
    id: row.id,
    agentId: row.agent_id,
    kind: row.kind as TurnKind,
    status: row.status as TurnStatus,
    model: row.model,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    iterations: row.iterations,
    output: row.output,
    ...(row.result_json === null ? {} : { result: JSON.parse(row.result_json) as unknown }),
    error: row.error_json === null ? null : (JSON.parse(row.error_json) as TurnError),
    outcome: row.outcome,
    usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens },
    ...(row.queued_at === null ? {} : { queuedAt: row.queued_at }),
    ...(row.schedule_id === null ? {} : { scheduleId: row.schedule_id }),
    ...(row.background_job_id === null ? {} : { backgroundJobId: row.background_job_id }),
  };
}
