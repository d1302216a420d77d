import { ServiceError } from '../../service-error.js';
import type { ScheduleRecord } from '../schedule-record.js';

/** The service's field names as the tools spell them. */
const TOOL_FIELDS: Readonly<Record<string, string>> = { delaySeconds: 'delay_seconds', timeZone: 'time_zone', at: 'at', cron: 'cron', prompt: 'prompt' };

/** A caller fault becomes a tool error the model reads, naming the tool's own field. */
export async function asScheduleToolError<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    if (error.issues === undefined || error.issues.length === 0) throw new Error(error.message, { cause: error });
    const text = error.issues
      .map((issue) => {
        const field = issue.path.map((part) => (typeof part === 'string' ? (TOOL_FIELDS[part] ?? part) : String(part))).join('.');
        return `${field}: ${issue.message}`;
      })
      .join('; ');
    throw new Error(text, { cause: error });
  }
}

/** Throws the error for a field an action needs. */
export function requireField<T>(value: T | undefined, field: string, action: string): T {
  if (value === undefined) throw new Error(`${field} is required when action is "${action}"`);
  return value;
}

/** Fields an action does not take, named, so the model learns the shape. */
export function refuseFields(params: Readonly<Record<string, unknown>>, fields: readonly string[], action: string): void {
  const given = fields.filter((field) => params[field] !== undefined);
  if (given.length > 0) throw new Error(`${given.join(', ')} ${given.length === 1 ? 'is' : 'are'} not used when action is "${action}"; leave ${given.length === 1 ? 'it' : 'them'} out`);
}

export function describeSchedule(schedule: ScheduleRecord): string {
  const when = schedule.kind === 'once' ? `once` : `cron "${schedule.cron ?? ''}" (${schedule.timeZone})`;
  const next = schedule.nextFireAt === null ? 'no next fire' : `next fire ${schedule.nextFireAt} (${schedule.nextFireDescription ?? ''})`;
  return `- ${schedule.id}: ${when}, ${schedule.status}, ${next}; prompt: ${schedule.prompt.slice(0, 200)}`;
}
