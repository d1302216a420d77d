import type { Row } from './deployment.js';
import type { WorkKind } from './plan.js';

/** One broken invariant: which, about what, in which round, and what was seen. */
export interface Violation {
  readonly invariant: string;
  readonly round: number | undefined;
  /** The agent id of the work item (or a row's id when no item is known). */
  readonly item: string;
  readonly detail: string;
}

/** What the torture knows of one planned item when it checks (see round.ts). */
export interface ItemRecord {
  readonly kind: WorkKind;
  readonly round: number;
  readonly agentId: string;
  readonly sent: boolean;
  readonly acknowledged: boolean;
  readonly messagesAcknowledged: number;
  readonly tasks: number;
  readonly parts: number;
}

export class Violations {
  readonly list: Violation[] = [];

  add(invariant: string, item: string, detail: string, round: number | undefined = roundOf(item)): void {
    this.list.push({ invariant, round, item, detail });
  }
}

/** The round an agent id (`r12-wf1`) was made in. */
export function roundOf(agentId: string): number | undefined {
  const match = /^r(\d+)-/.exec(agentId);
  return match === null ? undefined : Number(match[1]);
}

export const TERMINAL_TURN = new Set(['completed', 'failed', 'cancelled', 'interrupted']);
export const TERMINAL_RUN = new Set(['completed', 'failed', 'cancelled']);
export const TERMINAL_JOB = new Set(['completed', 'failed', 'stopped']);

export function text(row: Row, column: string): string {
  return optionalText(row, column) ?? '';
}

/** A column as text (the stores keep JSON and times as text; pg gives numbers and dates as such); undefined when null. */
export function optionalText(row: Row, column: string): string | undefined {
  const value = row[column];
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

export function integer(row: Row, column: string): number {
  const value = Number(row[column] ?? 0);
  return Number.isFinite(value) ? value : 0;
}

/** Groups rows by a key. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const name = key(item);
    const group = groups.get(name);
    if (group === undefined) groups.set(name, [item]);
    else group.push(item);
  }
  return groups;
}

export function parseJson(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

/** A stored event's body, read loosely. */
export function eventBody(row: Row): Readonly<Record<string, unknown>> {
  const body = parseJson(text(row, 'body'));
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
}
