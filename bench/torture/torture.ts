import { TEST_WEBHOOK_SECRET } from '../../test/support/webhook-receiver.js';
import { checkTorture, type TortureFigures } from './check.js';
import type { StuckLimits } from './check-delivery.js';
import { startDeployment, TORTURE_SERVICE_SETTINGS, type Deployment, type StoreKind } from './deployment.js';
import { planRound, type WorkItem } from './plan.js';
import { startTortureReceiver } from './receiver.js';
import { runRound, type Submitted } from './round.js';
import { takeSnapshot } from './snapshot.js';
import type { ItemRecord, Violation } from './violations.js';

export interface TortureOptions {
  readonly store: StoreKind;
  readonly seed: number;
  readonly rounds: number;
  /** Replays this one round's plan (from the seed) instead of rounds 1 … `rounds`. */
  readonly onlyRound?: number;
  /** The longest wait from a round's start to its kill; 3 s unless given. */
  readonly maxKillDelayMs?: number;
  /** How long the work may take to end after the last round; 180 s unless given. */
  readonly settleTimeoutMs?: number;
  /** Keeps the data folder, logs and schema when a violation is found (their place is printed). */
  readonly keepOnViolation?: boolean;
  /** The service entry (`src/server.ts` through tsx unless given). */
  readonly entry?: string;
  readonly log?: (line: string) => void;
  readonly signal?: AbortSignal;
}

export interface KillRecord {
  readonly round: number;
  readonly killed: string;
  readonly restarted: string;
  readonly atMs: number;
}

export interface TortureResult {
  readonly store: StoreKind;
  readonly seed: number;
  readonly rounds: readonly number[];
  readonly kills: readonly KillRecord[];
  readonly figures: TortureFigures;
  readonly violations: readonly Violation[];
  readonly wallMs: number;
  readonly settleMs: number;
  readonly settled: boolean;
  /** Where the data folder and logs were kept, when they were. */
  readonly keptAt: string | undefined;
}

/** Invariants that may still come true while work settles; the others, once broken, stay broken. */
const SETTLING = new Set(['not-terminal', 'webhook-missing', 'webhook-not-received', 'stuck', 'never-fired']);
/** Longer than the turn webhook sweep (5 s), so a second delivery would have come. */
const QUIET_MS = 6_000;

/**
 * The crash-anywhere torture on one store: each round submits new work (workflows of 9–11
 * tasks, background jobs with queued messages, once and cron schedules, plain turns, all with
 * webhooks), kill -9s a service process at a seeded instant and restarts it; then it pauses the
 * crons, lets the work settle, and checks the invariants. Cleans up what it started.
 */
export async function runTorture(options: TortureOptions): Promise<TortureResult> {
  const log = options.log ?? (() => undefined);
  const startedAt = performance.now();
  const receiver = await startTortureReceiver();
  const deployment = await startDeployment({ store: options.store, env: { WEBHOOK_SECRET: TEST_WEBHOOK_SECRET, WEB_FETCH_ALLOW_HOSTS: receiver.host }, ...(options.entry === undefined ? {} : { entry: options.entry }) }).catch(async (error: unknown) => {
    await receiver.close();
    throw error;
  });
  const rounds = options.onlyRound === undefined ? Array.from({ length: options.rounds }, (_unused, index) => index + 1) : [options.onlyRound];
  const submitted: Submitted[] = [];
  const kills: KillRecord[] = [];
  const pending: Promise<void>[] = [];
  const paused = new Set<string>();
  const restartFailures: Violation[] = [];
  let keep = options.keepOnViolation === true;
  try {
    log(`${options.store}: seed ${options.seed}, ${options.onlyRound === undefined ? `${rounds.length} rounds` : `round ${options.onlyRound} only`}, ${deployment.slots} process(es), data in ${deployment.runDir}`);
    for (const round of rounds) {
      if (options.signal?.aborted === true) break;
      await pauseCrons(deployment, submitted, paused, (item) => item.round <= round - 2);
      const plan = planRound(round, { seed: options.seed, slots: deployment.slots, receiverOrigin: receiver.origin, maxKillDelayMs: options.maxKillDelayMs ?? 3_000 });
      const outcome = await runRound(plan, deployment);
      submitted.push(...outcome.submitted);
      pending.push(...outcome.pending);
      kills.push({ round, killed: outcome.killedInstanceId, restarted: outcome.restartedInstanceId, atMs: outcome.killAtMs });
      for (const failure of outcome.restartFailures) {
        restartFailures.push({ invariant: 'restart-failed', round, item: outcome.killedInstanceId, detail: failure });
        log(`round ${round}: the restart after killing ${outcome.killedInstanceId} failed; started again`);
      }
      const acknowledged = outcome.submitted.filter((entry) => entry.acknowledged).length;
      log(`round ${round}: ${plan.items.length} items (${outcome.submitted.filter((entry) => entry.sent).length} sent, ${acknowledged} answered), kill -9 ${outcome.killedInstanceId} at ${outcome.killAtMs} ms, restarted as ${outcome.restartedInstanceId}`);
    }

    const settleStart = performance.now();
    await pauseCrons(deployment, submitted, paused, () => true, 60_000);
    await Promise.race([Promise.all(pending), new Promise((resolve) => setTimeout(resolve, 60_000))]);
    const items = submitted.map(toItemRecord);
    const limits = stuckLimits();
    const snapshot = async () => {
      const reader = await deployment.reader();
      try {
        return await takeSnapshot({ reader, dataDir: deployment.dataDir, agentIds: items.map((item) => item.agentId), liveInstances: deployment.liveInstanceIds(), pgBossSchema: deployment.pgBossSchema, hits: receiver.hits, deliveries: receiver.deliveries });
      } finally {
        await reader.close();
      }
    };
    const deadline = settleStart + (options.settleTimeoutMs ?? 180_000);
    let settled = false;
    for (;;) {
      const check = checkTorture({ snapshot: await snapshot(), items, limits });
      const open = check.violations.filter((violation) => SETTLING.has(violation.invariant)).length;
      if (open === 0) {
        settled = true;
        break;
      }
      if (performance.now() > deadline || options.signal?.aborted === true) break;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    const settleMs = performance.now() - settleStart;
    log(`settled ${settled ? 'in' : 'not within'} ${(settleMs / 1000).toFixed(1)} s; quiet ${QUIET_MS / 1000} s more for late deliveries`);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    const final = checkTorture({ snapshot: await snapshot(), items, limits });
    const violations = [...restartFailures, ...final.violations];
    keep = options.keepOnViolation === true && violations.length > 0;
    return {
      store: options.store,
      seed: options.seed,
      rounds,
      kills,
      figures: final.figures,
      violations,
      wallMs: performance.now() - startedAt,
      settleMs,
      settled,
      keptAt: keep ? deployment.runDir : undefined,
    };
  } finally {
    await deployment.close({ keep });
    await receiver.close();
  }
}

/** The limits past which a working row whose owner has not renewed it counts as left behind. */
export function stuckLimits(): StuckLimits {
  const durableMs = Number(TORTURE_SERVICE_SETTINGS.DURABLE_LEASE_SECONDS) * 1000;
  return {
    taskMs: Number(TORTURE_SERVICE_SETTINGS.WORKFLOW_TASK_LEASE_SECONDS) * 1000,
    // A job driver says it is alive every 5 s and is taken over after 20 s of quiet.
    jobMs: 20_000,
    // Turn heartbeats: every 2 s on PostgreSQL, every 15 s on SQLite.
    turnMs: 20_000,
    fireMs: durableMs + 10_000,
    durableMs: durableMs + 5_000,
  };
}

function toItemRecord(entry: Submitted): ItemRecord {
  const { item } = entry;
  return { kind: item.kind, round: item.round, agentId: item.agentId, sent: entry.sent, acknowledged: entry.acknowledged, messagesAcknowledged: entry.messagesAcknowledged, tasks: item.tasks, parts: item.parts };
}

/** Pauses the cron schedules `which` selects (found by agent, since a create cut by a kill has no id), until each is paused or `untilMs` runs out. */
async function pauseCrons(deployment: Deployment, submitted: readonly Submitted[], paused: Set<string>, which: (item: WorkItem) => boolean, untilMs = 0): Promise<void> {
  const deadline = performance.now() + untilMs;
  for (;;) {
    const waiting = submitted.filter((entry) => entry.item.kind === 'cron' && entry.sent && which(entry.item) && !paused.has(entry.item.agentId));
    for (const entry of waiting) {
      const baseUrl = deployment.baseUrl(0) ?? deployment.baseUrl(1);
      if (baseUrl === undefined) return;
      try {
        const listed = (await (await fetch(`${baseUrl}/schedules?agentId=${entry.item.agentId}`, { signal: AbortSignal.timeout(10_000) })).json()) as { schedules?: { id: string }[] };
        let all = true;
        for (const schedule of listed.schedules ?? []) {
          const answer = await fetch(`${baseUrl}/schedules/${schedule.id}/pause`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
          await answer.arrayBuffer();
          if (!answer.ok) all = false;
        }
        if (all && listed.schedules !== undefined) paused.add(entry.item.agentId);
      } catch {
        // Tried again in the next round, or until the deadline.
      }
    }
    if (waiting.every((entry) => paused.has(entry.item.agentId)) || performance.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

