import type { Row } from './deployment.js';
import type { SnapshotIndex } from './snapshot-index.js';
import { groupBy, optionalText, parseJson, TERMINAL_JOB, TERMINAL_RUN, TERMINAL_TURN, text, type ItemRecord, type Violations } from './violations.js';

interface Subject {
  readonly id: string;
  readonly agentId: string;
  readonly prefix: 'workflow' | 'background_job' | 'turn';
  readonly status: string;
  readonly terminal: boolean;
}

export interface WebhookFigures {
  readonly subjects: number;
  readonly terminalSubjects: number;
  readonly deliveries: number;
  readonly deliveryIds: number;
}

/**
 * Webhooks: every run, job and turn that asked for one (the torture's runs, jobs, fire turns and
 * plain turns all do) has it registered; each that ended has exactly one delivery id (the
 * store's attempts and the receiver's `webhook-id` headers together), the receiver saw it at
 * least once with the type and status of the end; nothing unended was sent, nothing unknown came.
 */
export function checkWebhooks(index: SnapshotIndex, items: readonly ItemRecord[], violations: Violations): WebhookFigures {
  const { snapshot } = index;
  const subjects = new Map<string, Subject>();
  for (const run of snapshot.runs) {
    if (optionalText(run, 'webhook_url') !== undefined) subjects.set(text(run, 'id'), { id: text(run, 'id'), agentId: text(run, 'agent_id'), prefix: 'workflow', status: text(run, 'status'), terminal: TERMINAL_RUN.has(text(run, 'status')) });
    else violations.add('webhook-not-registered', text(run, 'agent_id'), `run ${text(run, 'id')} has no webhook URL`);
  }
  for (const job of snapshot.jobs) {
    const request = parseJson(text(job, 'request_json')) as { webhook?: { url?: unknown } } | undefined;
    if (typeof request?.webhook?.url === 'string') subjects.set(text(job, 'id'), { id: text(job, 'id'), agentId: text(job, 'agent_id'), prefix: 'background_job', status: text(job, 'status'), terminal: TERMINAL_JOB.has(text(job, 'status')) });
    else violations.add('webhook-not-registered', text(job, 'agent_id'), `job ${text(job, 'id')} has no webhook`);
  }
  for (const row of snapshot.turnWebhooks) {
    const turn = index.turnsById.get(text(row, 'turn_id'));
    if (turn === undefined) continue;
    subjects.set(text(turn, 'id'), { id: text(turn, 'id'), agentId: text(turn, 'agent_id'), prefix: 'turn', status: text(turn, 'status'), terminal: TERMINAL_TURN.has(text(turn, 'status')) });
  }
  // The fire turns and plain turns asked for a webhook: each must have it stored with the turn.
  const withTurnWebhooks = new Set(items.filter((item) => item.kind === 'once' || item.kind === 'cron' || item.kind === 'turn').map((item) => item.agentId));
  for (const turn of snapshot.turns) {
    if (withTurnWebhooks.has(text(turn, 'agent_id')) && !subjects.has(text(turn, 'id'))) violations.add('webhook-not-registered', text(turn, 'agent_id'), `turn ${text(turn, 'id')} (${text(turn, 'status')}) has no stored webhook`);
  }

  const attempts = groupBy(snapshot.webhookAttempts, (row) => text(row, 'subject_id'));
  const received = groupBy(snapshot.deliveries, (delivery) => delivery.id);
  let terminalSubjects = 0;
  for (const subject of subjects.values()) {
    const seen = received.get(subject.id) ?? [];
    const ids = new Set([...(attempts.get(subject.id) ?? []).map((row: Row) => text(row, 'webhook_id')), ...seen.map((delivery) => delivery.webhookId)]);
    if (!subject.terminal) {
      if (ids.size > 0) violations.add('webhook-before-end', subject.agentId, `${subject.prefix} ${subject.id} is ${subject.status} but has webhook ids ${[...ids].join(', ')}`);
      continue;
    }
    terminalSubjects += 1;
    if (ids.size !== 1) violations.add(ids.size === 0 ? 'webhook-missing' : 'webhook-twice', subject.agentId, `${subject.prefix} ${subject.id} (${subject.status}) has ${ids.size} delivery ids${ids.size > 0 ? `: ${[...ids].join(', ')}` : ''}`);
    if (seen.length === 0) {
      if (ids.size > 0) violations.add('webhook-not-received', subject.agentId, `${subject.prefix} ${subject.id} (${subject.status}): the receiver never got ${[...ids].join(', ')}`);
      continue;
    }
    const expected = `${subject.prefix}.${subject.status}`;
    const wrong = seen.filter((delivery) => delivery.type !== expected || delivery.status !== subject.status);
    if (wrong.length > 0) violations.add('webhook-wrong-type', subject.agentId, `${subject.prefix} ${subject.id} ended ${subject.status}; the receiver got ${wrong.map((delivery) => `${delivery.type}/${delivery.status}`).join(', ')}`);
  }
  for (const [id, deliveries] of received) {
    if (!subjects.has(id)) violations.add('webhook-unexpected', id, `the receiver got ${deliveries.length} deliveries (${deliveries.map((delivery) => delivery.type).join(', ')}) about something that asked for none`, undefined);
  }
  return { subjects: subjects.size, terminalSubjects, deliveries: snapshot.deliveries.length, deliveryIds: new Set(snapshot.deliveries.map((delivery) => delivery.webhookId)).size };
}

/** An expired SQLite lease is taken back by the next idle poll of a worker (every second or so). */
const DURABLE_POLL_SLACK_MS = 5_000;

/** How stale a live owner's heartbeat may be before its row counts as left behind. */
export interface StuckLimits {
  readonly taskMs: number;
  readonly jobMs: number;
  readonly turnMs: number;
  readonly fireMs: number;
  readonly durableMs: number;
}

/**
 * Left behind: a row in a working state (`dispatched`/`running` task, `running` job or turn,
 * `starting` fire, active durable job) whose owner is not a live process or has not renewed it
 * for longer than its lease. Returns how many.
 */
export function checkStuck(index: SnapshotIndex, limits: StuckLimits, violations: Violations): number {
  const { snapshot } = index;
  const now = snapshot.takenAtMs;
  const live = snapshot.liveInstances;
  const before = violations.list.length;
  const stale = (at: string | undefined, limitMs: number) => at === undefined || now - Date.parse(at) > limitMs;
  const agentOfRun = new Map(snapshot.runs.map((run) => [text(run, 'id'), text(run, 'agent_id')]));
  for (const task of snapshot.tasks) {
    const state = text(task, 'state');
    if (state !== 'dispatched' && state !== 'running') continue;
    const owner = optionalText(task, 'owner');
    if (owner === undefined || !live.has(owner) || stale(optionalText(task, 'heartbeat_at'), limits.taskMs)) {
      violations.add('stuck', agentOfRun.get(text(task, 'run_id')) ?? text(task, 'run_id'), `task ${text(task, 'run_id')}.${text(task, 'seq')} is ${state}, owner ${owner ?? 'none'}${owner !== undefined && !live.has(owner) ? ' (not live)' : ''}, heartbeat ${text(task, 'heartbeat_at') || 'none'}`);
    }
  }
  for (const job of snapshot.jobs) {
    if (text(job, 'status') !== 'running') continue;
    const owner = optionalText(job, 'owner');
    if (owner === undefined || !live.has(owner) || stale(optionalText(job, 'heartbeat_at'), limits.jobMs)) {
      violations.add('stuck', text(job, 'agent_id'), `job ${text(job, 'id')} is running, owner ${owner ?? 'none'}${owner !== undefined && !live.has(owner) ? ' (not live)' : ''}, heartbeat ${text(job, 'heartbeat_at') || 'none'}`);
    }
  }
  const agentOfSchedule = new Map(snapshot.schedules.map((schedule) => [text(schedule, 'id'), text(schedule, 'agent_id')]));
  for (const fire of snapshot.fires) {
    if (text(fire, 'outcome') === 'starting' && stale(optionalText(fire, 'at'), limits.fireMs)) {
      violations.add('stuck', agentOfSchedule.get(text(fire, 'schedule_id')) ?? text(fire, 'schedule_id'), `the fire due ${text(fire, 'due_at')} is starting since ${text(fire, 'at')}`);
    }
  }
  for (const turn of snapshot.turns) {
    const status = text(turn, 'status');
    if (status !== 'running' && status !== 'queued') continue;
    const owner = text(turn, 'owner');
    if (!live.has(owner) || stale(optionalText(turn, 'heartbeat_at'), limits.turnMs)) {
      violations.add('stuck', text(turn, 'agent_id'), `turn ${text(turn, 'id')} is ${status}, owner ${owner}${live.has(owner) ? '' : ' (not live)'}, heartbeat ${text(turn, 'heartbeat_at')}`);
    }
  }
  // A durable job names a worker, not a process: its lease (SQLite) or heartbeat (pg-boss) says whether anyone holds it.
  for (const job of snapshot.activeDurableJobs) {
    const leaseOver = job.leaseUntilMs !== null ? now - job.leaseUntilMs > DURABLE_POLL_SLACK_MS : job.heartbeatMs === null || now - job.heartbeatMs > limits.durableMs;
    if (leaseOver) {
      violations.add('stuck', `durable job ${job.id}`, `the ${job.queue} job is active, held by ${job.lockedBy ?? 'a pg-boss worker'}, ${job.leaseUntilMs !== null ? `lease until ${new Date(job.leaseUntilMs).toISOString()}` : `last heartbeat ${job.heartbeatMs === null ? 'never' : new Date(job.heartbeatMs).toISOString()}`}`, undefined);
    }
  }
  return violations.list.length - before;
}
