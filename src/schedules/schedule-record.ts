import { z } from 'zod';
import type { ScheduleTables } from './schedule-tables.js';

export const scheduleKindSchema = z.enum(['once', 'cron']);
export const overlapPolicySchema = z.enum(['skip', 'enqueue']);
export const missedPolicySchema = z.enum(['skip', 'run_once']);

export const scheduleFireSchema = z.object({
  at: z.string().describe('When the fire was handled.'),
  dueAt: z.string().describe('When it was due.'),
  turnId: z.string().nullable().describe('The turn it started; null when it was skipped or failed to start.'),
  outcome: z.enum(['starting', 'started', 'skipped_overlap', 'skipped_missed', 'failed']),
  error: z.string().nullable(),
});

/** A schedule as `GET /schedules/:id` and the schedule tools show it. */
export const scheduleRecordSchema = z
  .object({
    id: z.string(),
    agentId: z.string(),
    kind: scheduleKindSchema,
    status: z.enum(['active', 'paused', 'done']),
    at: z.string().nullable().describe('once: when it fires.'),
    cron: z.string().nullable(),
    timeZone: z.string(),
    prompt: z.string(),
    overlap: overlapPolicySchema,
    missed: missedPolicySchema,
    nextFireAt: z.string().nullable().describe('The next fire; null while paused and once done.'),
    nextFireDescription: z.string().nullable().describe('The next fire in words, in the schedule\'s zone: "09:00 Asia/Shanghai, tomorrow".'),
    fires: z.array(scheduleFireSchema).describe('The last 20 fires, newest first.'),
    createdAt: z.string(),
    sourceTurnId: z.string().optional().describe('The turn whose schedule tool call created it.'),
    sourceCallId: z.string().optional().describe('That tool call: one schedule per (turn, call).'),
  })
  .meta({ id: 'Schedule' });

export type ScheduleRecord = z.infer<typeof scheduleRecordSchema>;
export type ScheduleFire = z.infer<typeof scheduleFireSchema>;

export function toScheduleRecord(row: ScheduleTables['schedules'], fires: readonly ScheduleTables['schedule_fires'][], nextFireDescription: string | null): ScheduleRecord {
  return {
    id: row.id,
    agentId: row.agent_id,
    kind: scheduleKindSchema.parse(row.kind),
    status: row.status as ScheduleRecord['status'],
    at: row.at,
    cron: row.cron,
    timeZone: row.time_zone,
    prompt: row.prompt,
    overlap: overlapPolicySchema.parse(row.overlap),
    missed: missedPolicySchema.parse(row.missed),
    nextFireAt: row.next_fire_at,
    nextFireDescription,
    fires: fires.map((fire) => ({ at: fire.at, dueAt: fire.due_at, turnId: fire.turn_id, outcome: fire.outcome as ScheduleFire['outcome'], error: fire.error })),
    createdAt: row.created_at,
    ...(row.source_turn_id === null ? {} : { sourceTurnId: row.source_turn_id }),
    ...(row.source_call_id === null ? {} : { sourceCallId: row.source_call_id }),
  };
}
