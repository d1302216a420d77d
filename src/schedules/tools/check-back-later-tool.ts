import { z } from 'zod';
import type { WorkRequest } from '../../turns/work-request.js';
import type { ScheduleService } from '../schedule-service.js';
import { defineWorkerTool, type WorkerAgentTool } from '../../tools/define-worker-tool.js';
import type { AgentToolResult } from '../../tools/tool-result.js';
import { asScheduleToolError, describeSchedule, refuseFields, requireField } from './schedule-tool-support.js';

const checkBackLaterSchema = z.object({
  action: z.enum(['create', 'list', 'cancel']).describe('create: come back once later; list: your pending check-backs; cancel: drop one.'),
  delay_seconds: z.number().int().min(1).max(366 * 86_400).optional().describe('create: come back after this many seconds (or give `at`).'),
  at: z.string().max(100).optional().describe('create: come back at this ISO 8601 time with its offset, e.g. "2026-12-02T09:00:00+08:00" (or give `delay_seconds`).'),
  time_zone: z.string().max(100).optional().describe('create: the IANA zone the confirmation uses, e.g. "Asia/Shanghai"; default UTC.'),
  prompt: z.string().min(1).max(100_000).optional().describe('create: what you will be told when the time comes: what to check and what to do then.'),
  schedule_id: z.string().max(200).optional().describe('cancel: the id create or list gave.'),
});

type CheckBackLaterParams = z.output<typeof checkBackLaterSchema>;

/** `check_back_later`: one later turn for this agent with a prompt, after a delay or at a time. */
export function createCheckBackLaterTool(options: { readonly service: ScheduleService; readonly request: WorkRequest; readonly turnId: string }): WorkerAgentTool<CheckBackLaterParams> {
  const { service, request } = options;
  const agentId = request.agent.id;
  return defineWorkerTool<CheckBackLaterParams>({
    name: 'check_back_later',
    description: [
      'Come back to something later: at the time, a new turn of yours starts with the prompt you leave (and your current tools).',
      'action "create" takes delay_seconds or at, and prompt (time_zone only words the confirmation); "list" shows your pending ones;',
      '"cancel" takes schedule_id. For something that repeats, use the cron tool.',
    ].join(' '),
    schema: checkBackLaterSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: false,
    describeActivity: (params) => (params.action === 'create' ? 'Scheduling a check-back' : params.action === 'list' ? 'Listing check-backs' : `Cancelling check-back ${params.schedule_id ?? ''}`),
    async execute(params, context): Promise<AgentToolResult> {
      if (params.action === 'list') {
        refuseFields(params, ['delay_seconds', 'at', 'time_zone', 'prompt', 'schedule_id'], 'list');
        const schedules = (await service.list({ agentId, kind: 'once' })).filter((schedule) => schedule.status !== 'done');
        return { content: schedules.length === 0 ? 'You have no pending check-backs.' : schedules.map(describeSchedule).join('\n'), details: { count: schedules.length } };
      }
      if (params.action === 'cancel') {
        refuseFields(params, ['delay_seconds', 'at', 'time_zone', 'prompt'], 'cancel');
        const id = requireField(params.schedule_id, 'schedule_id', 'cancel');
        const schedule = await asScheduleToolError(() => service.get(id, agentId));
        if (schedule.kind !== 'once') throw new Error(`schedule_id: ${id} is a cron schedule; cancel it with the cron tool`);
        await service.remove(id, agentId);
        return { content: `Cancelled check-back ${id}.`, details: { scheduleId: id } };
      }
      refuseFields(params, ['schedule_id'], 'create');
      const prompt = requireField(params.prompt, 'prompt', 'create');
      if ((params.delay_seconds === undefined) === (params.at === undefined)) throw new Error('give exactly one of delay_seconds and at when action is "create"');
      const timeZone = params.time_zone ?? 'UTC';
      const { record: schedule } = await asScheduleToolError(() =>
        service.create({ request, kind: 'once', delaySeconds: params.delay_seconds, at: params.at, timeZone, prompt, sourceTurnId: options.turnId, sourceCallId: context.callId }),
      );
      const receipt = `I'll check back at ${schedule.nextFireDescription ?? schedule.nextFireAt ?? ''}`;
      return {
        content: `${receipt} (${schedule.nextFireAt ?? ''}); schedule ${schedule.id}.`,
        details: { scheduleId: schedule.id, nextFireAt: schedule.nextFireAt },
        presentation: [{ type: 'effect.receipt', data: { text: receipt, scheduleId: schedule.id, nextFireAt: schedule.nextFireAt, timeZone: schedule.timeZone } }],
      };
    },
  });
}
