import { Cron } from 'croner';

/** A bad expression or zone, with the field it is about. */
export class ScheduleTimingError extends Error {
  readonly field: 'cron' | 'timeZone';

  constructor(field: 'cron' | 'timeZone', message: string) {
    super(message);
    this.name = 'ScheduleTimingError';
    this.field = field;
  }
}

/** Throws unless `zone` is an IANA time zone this runtime knows ("UTC", "Asia/Shanghai"). */
export function checkTimeZone(zone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw new ScheduleTimingError('timeZone', `"${zone.slice(0, 100)}" is not an IANA time zone (e.g. "UTC", "Europe/Berlin", "Asia/Shanghai")`);
  }
}

/**
 * Parses a cron expression through croner: 5 fields (minute hour day-of-month month
 * day-of-week), or 6 with seconds first. Throws a ScheduleTimingError that says what is wrong.
 */
export function parseCron(options: { readonly expression: string; readonly timeZone: string }): Cron {
  checkTimeZone(options.timeZone);
  const fields = options.expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    throw new ScheduleTimingError('cron', `"${options.expression.slice(0, 100)}" has ${fields.length} field(s); give 5 (minute hour day month weekday) or 6 with seconds first`);
  }
  try {
    const cron = new Cron(fields.join(' '), { timezone: options.timeZone, paused: true });
    if (cron.nextRun() === null) throw new ScheduleTimingError('cron', `"${options.expression.slice(0, 100)}" never fires`);
    return cron;
  } catch (error) {
    if (error instanceof ScheduleTimingError) throw error;
    const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    throw new ScheduleTimingError('cron', `"${options.expression.slice(0, 100)}" is not a valid cron expression: ${reason}`);
  }
}

/** The first fire strictly after `after`, or null when there is none. */
export function nextCronFire(options: { readonly expression: string; readonly timeZone: string; readonly after: Date }): Date | null {
  return parseCron(options).nextRun(options.after);
}
