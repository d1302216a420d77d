import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Row, StoreReader } from './deployment.js';
import { MARKER_LINE } from './plan.js';
import { optionalText, text } from './violations.js';
import type { Delivery, MarkerHit } from './receiver.js';

/** A line of an agent home's markers.log: the tag the script gave it and its nonce. */
export interface MarkerLine {
  readonly tag: string;
  readonly nonce: string;
}

/** A marker line a turn's stored `run_command` output names: that turn wrote it. */
export interface TurnMarker extends MarkerLine {
  readonly turnId: string;
  readonly callId: string;
}

/** An active durable job (the in-process runner's row on SQLite, pg-boss's on PostgreSQL). */
export interface ActiveDurableJob {
  readonly id: string;
  readonly queue: string;
  /** Who holds it, as the store says (a worker token on SQLite), for the report. */
  readonly lockedBy: string | null;
  /** When its lease runs out (SQLite) or its last heartbeat (PostgreSQL), in ms since the epoch. */
  readonly leaseUntilMs: number | null;
  readonly heartbeatMs: number | null;
}

/** Everything the checks read, taken at one time from the store, the agent homes and the receiver. */
export interface Snapshot {
  readonly takenAtMs: number;
  readonly liveInstances: ReadonlySet<string>;
  readonly runs: readonly Row[];
  readonly tasks: readonly Row[];
  readonly workflowEvents: readonly Row[];
  readonly jobs: readonly Row[];
  readonly jobTurns: readonly Row[];
  readonly jobMessages: readonly Row[];
  readonly jobEvents: readonly Row[];
  readonly schedules: readonly Row[];
  readonly fires: readonly Row[];
  readonly turns: readonly Row[];
  readonly turnMarkers: readonly TurnMarker[];
  readonly turnWebhooks: readonly Row[];
  readonly webhookAttempts: readonly Row[];
  readonly idempotencyKeys: readonly Row[];
  readonly activeDurableJobs: readonly ActiveDurableJob[];
  /** markers.log of each agent home that has one. */
  readonly markers: ReadonlyMap<string, readonly MarkerLine[]>;
  readonly hits: readonly MarkerHit[];
  readonly deliveries: readonly Delivery[];
}

export async function takeSnapshot(options: {
  readonly reader: StoreReader;
  readonly dataDir: string;
  readonly agentIds: readonly string[];
  readonly liveInstances: ReadonlySet<string>;
  readonly pgBossSchema: string | undefined;
  readonly hits: readonly MarkerHit[];
  readonly deliveries: readonly Delivery[];
}): Promise<Snapshot> {
  const { reader } = options;
  // What the receiver got first, then the store: a hit or a delivery comes from a turn or an end
  // the store already holds. The homes last: a line written after the store was read comes from
  // a turn the store shows still running.
  const hits = [...options.hits];
  const deliveries = [...options.deliveries];
  const takenAtMs = Date.now();
  const results: Row[][] = [];
  const queries = [
    'select id, agent_id, status, webhook_url, result_json, error_json from workflow_runs',
    'select run_id, seq, state, attempts, turn_ids_json, owner, heartbeat_at, error from workflow_tasks',
    'select run_id, seq, type, body from workflow_events',
    'select id, agent_id, status, request_json, owner, heartbeat_at, error_json from background_jobs',
    'select job_id, turn_index, turn_id, outcome from background_job_turns',
    'select id, job_id, turn_index from background_job_messages',
    'select job_id, seq, type, body from background_job_events',
    'select id, agent_id, kind, status, request_json from schedules',
    'select schedule_id, due_at, at, outcome, turn_id, error from schedule_fires',
    // Every column: a later version's (e.g. `resumes`) is read when it is there.
    'select * from turns',
    "select turn_id, body from turn_events where type = 'tool.completed'",
    'select turn_id, url, enqueued_at from turn_webhooks',
    'select webhook_id, attempt, subject_kind, subject_id, type, outcome from webhook_attempts',
    "select scope, key, turn_id from idempotency_keys where scope = 'workflow-task'",
  ];
  const activeDurableJobs = await reader.consistently(async () => {
    for (const query of queries) results.push(await reader.all(query));
    return readActiveDurableJobs(reader, options.pgBossSchema);
  });
  const [runs = [], tasks = [], workflowEvents = [], jobs = [], jobTurns = [], jobMessages = [], jobEvents = [], schedules = [], fires = [], turns = [], toolEvents = [], turnWebhooks = [], webhookAttempts = [], idempotencyKeys = []] = results;
  const markers = new Map<string, MarkerLine[]>();
  await Promise.all(
    options.agentIds.map(async (agentId) => {
      const text = await readFile(path.join(options.dataDir, 'agents', agentId, 'home', 'markers.log'), 'utf8').catch(() => undefined);
      if (text !== undefined) markers.set(agentId, parseMarkers(text));
    }),
  );
  return {
    takenAtMs,
    liveInstances: options.liveInstances,
    runs,
    tasks,
    workflowEvents,
    jobs,
    jobTurns,
    jobMessages,
    jobEvents,
    schedules,
    fires,
    turns,
    turnMarkers: toolEvents.flatMap((row) => turnMarkersOf(row)),
    turnWebhooks,
    webhookAttempts,
    idempotencyKeys,
    activeDurableJobs,
    markers,
    hits,
    deliveries,
  };
}

export function parseMarkers(text: string): MarkerLine[] {
  return [...text.matchAll(MARKER_LINE)].map((match) => ({ tag: match[1] ?? '', nonce: match[2] ?? '' }));
}

/** The marker lines a `run_command` call's stored output shows. */
function turnMarkersOf(row: Row): TurnMarker[] {
  const body = JSON.parse(text(row, 'body')) as { name?: unknown; callId?: unknown; output?: unknown };
  if (body.name !== 'run_command' || typeof body.output !== 'string') return [];
  const callId = typeof body.callId === 'string' ? body.callId : '';
  return parseMarkers(body.output).map((line) => ({ ...line, turnId: text(row, 'turn_id'), callId }));
}

async function readActiveDurableJobs(reader: StoreReader, pgBossSchema: string | undefined): Promise<ActiveDurableJob[]> {
  if (reader.dialect === 'sqlite') {
    const rows = await reader.all("select id, queue, locked_by, lease_until from durable_jobs where state = 'active'");
    return rows.map((row) => ({
      id: text(row, 'id'),
      queue: text(row, 'queue'),
      lockedBy: optionalText(row, 'locked_by') ?? null,
      leaseUntilMs: optionalText(row, 'lease_until') === undefined ? null : Date.parse(text(row, 'lease_until')),
      heartbeatMs: null,
    }));
  }
  if (pgBossSchema === undefined) return [];
  const rows = await reader.all(
    `select id::text as id, name, (extract(epoch from coalesce(heartbeat_on, started_on)) * 1000)::float8 as beat_ms from "${pgBossSchema}".job where state = 'active'`,
  );
  return rows.map((row) => ({ id: text(row, 'id'), queue: text(row, 'name'), lockedBy: null, leaseUntilMs: null, heartbeatMs: optionalText(row, 'beat_ms') === undefined ? null : Number(row['beat_ms']) }));
}
