import { workRequestOf, type ToolSource } from '../../turns/assembly/tool-source.js';
import type { ScheduleService } from '../schedule-service.js';
import { createCheckBackLaterTool } from './check-back-later-tool.js';
import { createCronTool } from './cron-tool.js';

/** `agent.tools.schedule`: `check_back_later` and `cron`, whose fires start turns like this one. */
export function scheduleToolSource(options: { readonly service: ScheduleService }): ToolSource {
  return {
    tools: (turn) => {
      const request = workRequestOf(turn);
      return [createCheckBackLaterTool({ service: options.service, request, turnId: turn.id }), createCronTool({ service: options.service, request, turnId: turn.id })];
    },
  };
}
