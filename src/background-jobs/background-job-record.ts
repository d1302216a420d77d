import { z } from 'zod';
import type { BackgroundJobTables } from './background-job-tables.js';

export const backgroundJobStatusSchema = z.enum(['running', 'completed', 'failed', 'stopped']);
export type BackgroundJobStatus = z.infer<typeof backgroundJobStatusSchema>;

/** A background job as `GET /background-jobs/:id` and `show_background_job_details` show it. */
export const backgroundJobRecordSchema = z
  .object({
    id: z.string(),
    agentId: z.string(),
    title: z.string(),
    instructions: z.string(),
    status: backgroundJobStatusSchema,
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    turnIds: z.array(z.string()).describe("The job's turns, in the order they ran."),
    turns: z
      .array(
        z.object({
          turnId: z.string(),
          index: z.number().int(),
          outcome: z.enum(['running', 'completed', 'failed', 'interrupted', 'stopped']).describe('`interrupted`: the service stopped during it; the next turn was told.'),
        }),
      )
      .describe('Each turn and how it ended.'),
    pendingMessages: z.number().int().describe('Messages waiting for the next turn.'),
    output: z.string().nullable().describe("The last turn's output."),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    sourceTurnId: z.string().optional().describe('The turn whose `create_background_job` call started it.'),
    sourceCallId: z.string().optional(),
  })
  .meta({ id: 'BackgroundJob' });

export type BackgroundJobRecord = z.infer<typeof backgroundJobRecordSchema>;

type JobRow = BackgroundJobTables['background_jobs'];
type JobTurnRow = BackgroundJobTables['background_job_turns'];

export function toBackgroundJobRecord(row: JobRow, turns: readonly JobTurnRow[], pendingMessages: number): BackgroundJobRecord {
  return {
    id: row.id,
    agentId: row.agent_id,
    title: row.title,
    instructions: row.instructions,
    status: backgroundJobStatusSchema.parse(row.status),
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    turnIds: turns.map((turn) => turn.turn_id),
    turns: turns.map((turn) => ({
      turnId: turn.turn_id,
      index: turn.turn_index,
      outcome: turn.outcome === null ? 'running' : (turn.outcome as BackgroundJobRecord['turns'][number]['outcome']),
    })),
    pendingMessages,
    output: row.output,
    error: row.error_json === null ? null : (JSON.parse(row.error_json) as { code: string; message: string }),
    ...(row.source_turn_id === null ? {} : { sourceTurnId: row.source_turn_id }),
    ...(row.source_call_id === null ? {} : { sourceCallId: row.source_call_id }),
  };
}
