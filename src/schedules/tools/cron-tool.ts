import { z } from 'zod';
import type { WorkRequest } from '../../turns/work-request.js';
import type { ScheduleService } from '../schedule-service.js';
import { defineWorkerTool, type WorkerAgentTool } from '../../tools/define-worker-tool.js';
import type { AgentToolResult } from '../../tools/tool-result.js';
import { asScheduleToolError, describeSchedule, refuseFields, requireField } from './schedule-tool-support.js';

const cronSchema = z.object({
  action: z.enum(['create', 'list', 'cancel', 'pause', 'resume']).describe('create a recurring schedule, list yours, or cancel / pause / resume one.'),
  cron: z.string().max(200).optional().describe('create: 5 fields "minute hour day month weekday" (e.g. "0 9 * * 1-5"), or 6 with seconds first.'),
  time_zone: z.string().max(100).optional().describe('create: the IANA zone the expression is read in, e.g. "Asia/Shanghai"; default UTC.'),
  prompt: z.string().min(1).max(100_000).optional().describe('create: what you will be told at each fire.'),
  overlap: z.enum(['skip', 'enqueue']).optional().describe('create: when a fire comes while the previous one still runs: skip it (default) or run it after.'),
  missed: z.enum(['skip', 'run_once']).optional().describe('create: fires due while the service was down: skip them, or run once when it is back (default).'),
  schedule_id: z.string().max(200).optional().describe('cancel, pause, resume: the id create or list gave.'),
});

type CronParams = z.output<typeof cronSchema>;
const CREATE_FIELDS = ['cron', 'time_zone', 'prompt', 'overlap', 'missed'] as const;

/** `cron`: a recurring turn for this agent with a prompt, on a cron expression in an IANA zone. */
export function createCronTool(options: { readonly service: ScheduleService; readonly request: WorkRequest; readonly turnId: string }): WorkerAgentTool<CronParams> {
  const { service, request } = options;
  const agentId = request.agent.id;
  return defineWorkerTool<CronParams>({
    name: 'cron',
    description: [
      'Do something on a recurring schedule: at each fire a new turn of yours starts with the prompt you leave (and your current tools).',
      'action "create" takes cron and prompt (time_zone, overlap, missed optional); "list" shows yours; "cancel", "pause", "resume" take schedule_id.',
      'For a single later check, use check_back_later.',
    ].join(' '),
    schema: cronSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: false,
    describeActivity: (params) => (params.action === 'create' ? `Scheduling "${params.cron ?? ''}"` : params.action === 'list' ? 'Listing schedules' : `${params.action} schedule ${params.schedule_id ?? ''}`),
    async execute(params, context): Promise<AgentToolResult> {
      if (params.action === 'list') {
        refuseFields(params, [...CREATE_FIELDS, 'schedule_id'], 'list');
        const schedules = await service.list({ agentId, kind: 'cron' });
        return { content: schedules.length === 0 ? 'You have no cron schedules.' : schedules.map(describeSchedule).join('\n'), details: { count: schedules.length } };
      }
      if (params.action === 'create') {
        refuseFields(params, ['schedule_id'], 'create');
        const cron = requireField(params.cron, 'cron', 'create');
        const prompt = requireField(params.prompt, 'prompt', 'create');
        const { record: schedule } = await asScheduleToolError(() =>
          service.create({ request, kind: 'cron', cron, timeZone: params.time_zone ?? 'UTC', prompt, overlap: params.overlap, missed: params.missed, sourceTurnId: options.turnId, sourceCallId: context.callId }),
        );
        const receipt = `I'll run this on "${schedule.cron ?? ''}" (${schedule.timeZone}); first at ${schedule.nextFireDescription ?? ''}`;
        return {
          content: `${receipt} (${schedule.nextFireAt ?? ''}); schedule ${schedule.id}.`,
          details: { scheduleId: schedule.id, nextFireAt: schedule.nextFireAt },
          presentation: [{ type: 'effect.receipt', data: { text: receipt, scheduleId: schedule.id, nextFireAt: schedule.nextFireAt, timeZone: schedule.timeZone } }],
        };
      }
      refuseFields(params, CREATE_FIELDS, params.action);
      const id = requireField(params.schedule_id, 'schedule_id', params.action);
      const existing = await asScheduleToolError(() => service.get(id, agentId));
      if (existing.kind !== 'cron') throw new Error(`schedule_id: ${id} is a check-back; use check_back_later for it`);
      if (params.action === 'cancel') {
        await service.remove(id, agentId);
        return { content: `Cancelled schedule ${id}.`, details: { scheduleId: id } };
      }
      const schedule = params.action === 'pause' ? await service.pause(id, agentId) : await service.resume(id, agentId);
      const next = schedule.nextFireAt === null ? 'no next fire' : `next fire ${schedule.nextFireDescription ?? ''} (${schedule.nextFireAt})`;
      return { content: `Schedule ${id} is ${schedule.status}; ${next}.`, details: { scheduleId: id, status: schedule.status, nextFireAt: schedule.nextFireAt } };
    },
  });
}
