import { checkStuck, checkWebhooks, type StuckLimits, type WebhookFigures } from './check-delivery.js';
import { checkPlainTurn, checkSchedule } from './check-fires.js';
import { checkJob, checkWorkflow } from './check-work.js';
import type { WorkKind } from './plan.js';
import type { Snapshot } from './snapshot.js';
import { indexSnapshot } from './snapshot-index.js';
import { TERMINAL_JOB, TERMINAL_RUN, TERMINAL_TURN, text, Violations, type ItemRecord, type Violation } from './violations.js';

export interface ItemCounts {
  planned: number;
  sent: number;
  acknowledged: number;
  stored: number;
}

export interface TortureFigures {
  readonly items: Readonly<Record<WorkKind, ItemCounts>>;
  /** Runs, jobs, schedules' fires and turns that ended, of those stored. */
  readonly ended: { readonly runs: string; readonly jobs: string; readonly fires: string; readonly turns: string };
  readonly tasks: number;
  readonly turns: number;
  readonly turnsByKind: Readonly<Record<string, number>>;
  readonly interruptedTurns: number;
  readonly jobTurns: number;
  /** Messages to jobs: answered 202, and stored. */
  readonly messages: { readonly acknowledged: number; readonly stored: number };
  readonly firesStarted: number;
  readonly markerLines: number;
  readonly taskMarkerHits: number;
  readonly webhooks: WebhookFigures;
  readonly stuck: number;
}

export interface TortureCheck {
  readonly figures: TortureFigures;
  readonly violations: readonly Violation[];
}

const KINDS: readonly WorkKind[] = ['workflow', 'job', 'once', 'cron', 'turn'];

/**
 * Checks a snapshot taken after the last round and the settle time against the torture's
 * invariants (see docs/faults.md): a pure function of what was stored, written and received,
 * and of what the torture submitted, so it can be tried on made-up data.
 */
export function checkTorture(options: { readonly snapshot: Snapshot; readonly items: readonly ItemRecord[]; readonly limits: StuckLimits }): TortureCheck {
  const { snapshot, items } = options;
  const index = indexSnapshot(snapshot);
  const violations = new Violations();
  for (const item of items) {
    if (item.kind === 'workflow') checkWorkflow(index, item, violations);
    else if (item.kind === 'job') checkJob(index, item, violations);
    else if (item.kind === 'turn') checkPlainTurn(index, item, violations);
    else checkSchedule(index, item, violations);
  }
  const webhooks = checkWebhooks(index, items, violations);
  const stuck = checkStuck(index, options.limits, violations);

  const counts = Object.fromEntries(KINDS.map((kind) => [kind, { planned: 0, sent: 0, acknowledged: 0, stored: 0 }])) as Record<WorkKind, ItemCounts>;
  for (const item of items) {
    const count = counts[item.kind];
    count.planned += 1;
    if (item.sent) count.sent += 1;
    if (item.acknowledged) count.acknowledged += 1;
    const stored =
      item.kind === 'workflow' ? index.runsByAgent.has(item.agentId) : item.kind === 'job' ? index.jobsByAgent.has(item.agentId) : item.kind === 'turn' ? index.turnsByAgent.has(item.agentId) : index.schedulesByAgent.has(item.agentId);
    if (stored) count.stored += 1;
  }
  const ended = (rows: readonly { [column: string]: unknown }[], column: string, terminal: (value: string) => boolean) => `${rows.filter((row) => terminal(text(row, column))).length}/${rows.length}`;
  const turnsByKind: Record<string, number> = {};
  for (const turn of snapshot.turns) {
    const kind = text(turn, 'background_job_id') !== '' ? 'job' : text(turn, 'schedule_id') !== '' ? 'fire' : text(turn, 'kind') === 'workflow_task' ? 'task' : 'plain';
    turnsByKind[kind] = (turnsByKind[kind] ?? 0) + 1;
  }
  return {
    figures: {
      items: counts,
      ended: {
        runs: ended(snapshot.runs, 'status', (value) => TERMINAL_RUN.has(value)),
        jobs: ended(snapshot.jobs, 'status', (value) => TERMINAL_JOB.has(value)),
        fires: ended(snapshot.fires, 'outcome', (value) => value !== 'starting'),
        turns: ended(snapshot.turns, 'status', (value) => TERMINAL_TURN.has(value)),
      },
      tasks: snapshot.tasks.length,
      turns: snapshot.turns.length,
      turnsByKind,
      interruptedTurns: snapshot.turns.filter((turn) => text(turn, 'status') === 'interrupted').length,
      jobTurns: snapshot.jobTurns.length,
      messages: { acknowledged: items.reduce((sum, item) => sum + item.messagesAcknowledged, 0), stored: snapshot.jobMessages.length },
      firesStarted: snapshot.fires.filter((fire) => text(fire, 'outcome') === 'started').length,
      markerLines: [...snapshot.markers.values()].reduce((sum, lines) => sum + lines.length, 0),
      taskMarkerHits: snapshot.hits.length,
      webhooks,
      stuck,
    },
    violations: violations.list,
  };
}
