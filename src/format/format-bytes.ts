const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/**
 * A byte count as a person reads it: "512 B", "1.2 KB", "3.4 MB" (steps of 1024, one
 * decimal below 10 so small sizes stay precise, none above).
 */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  // Move up while the rounded figure would read 1024 or more ("1024 KB" is "1 MB").
  while (unit < UNITS.length - 1 && Math.round(value) >= 1024) {
    value /= 1024;
    unit += 1;
  }
  const rounded = unit > 0 && value < 10 ? Math.round(value * 10) / 10 : Math.round(value);
  return `${rounded} ${UNITS[unit] ?? 'B'}`;
}

/** A count with its noun: "1 entry", "14 entries", "3 replacements". */
export function formatCount(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}
