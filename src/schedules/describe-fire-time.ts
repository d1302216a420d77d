const DAY_MS = 86_400_000;

/**
 * A fire time as a person says it, in the schedule's zone: "09:00 Asia/Shanghai, tomorrow",
 * "10:31:05 UTC, today", "08:00 Europe/Berlin, on Fri 4 Dec 2026". Seconds only when they are
 * not zero.
 */
export function describeFireTime(options: { readonly at: Date; readonly timeZone: string; readonly now: Date }): string {
  const { at, timeZone, now } = options;
  const parts = (date: Date) => {
    const values = new Intl.DateTimeFormat('en-GB', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).formatToParts(date);
    const get = (type: Intl.DateTimeFormatPartTypes) => values.find((part) => part.type === type)?.value ?? '00';
    return { day: Date.UTC(Number(get('year')), Number(get('month')) - 1, Number(get('day'))), time: `${get('hour')}:${get('minute')}`, second: get('second') };
  };
  const target = parts(at);
  const today = parts(now);
  const time = target.second === '00' ? target.time : `${target.time}:${target.second}`;
  const days = Math.round((target.day - today.day) / DAY_MS);
  const when =
    days === 0
      ? 'today'
      : days === 1
        ? 'tomorrow'
        : `on ${new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }).format(at)}`;
  return `${time} ${timeZone}, ${when}`;
}
