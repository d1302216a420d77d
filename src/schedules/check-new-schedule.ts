import { invalidRequest } from '../service-error.js';
import type { WorkRequest } from '../turns/work-request.js';
import { checkWebhookUrl } from '../webhooks/check-webhook-url.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { checkTimeZone, parseCron, ScheduleTimingError } from './cron-timing.js';

const MAX_DELAY_SECONDS = 366 * 86_400;

export interface NewSchedule {
  readonly request: WorkRequest;
  readonly kind: 'once' | 'cron';
  readonly at?: string | undefined;
  readonly delaySeconds?: number | undefined;
  readonly cron?: string | undefined;
  readonly timeZone?: string | undefined;
  readonly prompt: string;
  readonly overlap?: 'skip' | 'enqueue' | undefined;
  readonly missed?: 'skip' | 'run_once' | undefined;
  readonly sourceTurnId?: string;
  /** The tool call that made it: a second create for the same (turn, call) answers the first schedule. */
  readonly sourceCallId?: string;
}

/**
 * Checks a new schedule's timing and webhook, and says its zone and first fire. Bad input is a
 * 400 naming the field.
 */
export function checkNewSchedule(options: { readonly input: NewSchedule; readonly now: Date; readonly webhooks: WebhookService }): { timeZone: string; firstFire: Date } {
  const { input, now } = options;
  const timeZone = input.timeZone ?? 'UTC';
  const problem = (field: string, message: string): never => {
    throw invalidRequest([{ path: [field], message }]);
  };
  let firstFire: Date;
  try {
    checkTimeZone(timeZone);
    if (input.kind === 'once') {
      if (input.cron !== undefined) problem('cron', 'only for kind "cron"');
      if ((input.at === undefined) === (input.delaySeconds === undefined)) problem(input.at === undefined ? 'delaySeconds' : 'at', 'give exactly one of at and delaySeconds for kind "once"');
      if (input.delaySeconds !== undefined) {
        if (!Number.isInteger(input.delaySeconds) || input.delaySeconds < 1 || input.delaySeconds > MAX_DELAY_SECONDS) problem('delaySeconds', `must be a whole number of seconds from 1 to ${MAX_DELAY_SECONDS}`);
        firstFire = new Date(now.getTime() + input.delaySeconds * 1000);
      } else {
        const at = new Date(input.at ?? '');
        if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(input.at ?? '')) problem('at', 'must be an ISO 8601 time with a zone, e.g. "2026-12-02T09:00:00+08:00"');
        if (at.getTime() <= now.getTime()) problem('at', `is in the past (now is ${now.toISOString()})`);
        if (at.getTime() > now.getTime() + MAX_DELAY_SECONDS * 1000) problem('at', 'is more than a year ahead');
        firstFire = at;
      }
    } else {
      if (input.at !== undefined) problem('at', 'only for kind "once"');
      if (input.delaySeconds !== undefined) problem('delaySeconds', 'only for kind "once"');
      if (input.cron === undefined) problem('cron', 'required for kind "cron"');
      const next = parseCron({ expression: input.cron ?? '', timeZone }).nextRun(now);
      if (next === null) problem('cron', 'never fires');
      firstFire = next ?? now;
    }
  } catch (error) {
    if (error instanceof ScheduleTimingError) throw invalidRequest([{ path: [error.field], message: error.message }]);
    throw error;
  }
  if (input.request.webhook !== undefined) {
    checkWebhookUrl({ url: input.request.webhook.url, allowHosts: options.webhooks.allowHosts, secretConfigured: options.webhooks.configured, path: ['webhook', 'url'] });
  }
  return { timeZone, firstFire };
}
