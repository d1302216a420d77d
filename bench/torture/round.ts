import type { Deployment } from './deployment.js';
import type { RoundPlan, WorkItem } from './plan.js';

/** What the torture knows about one submitted item: whether the service answered its create (then it must exist), its id, its messages. */
export interface Submitted {
  readonly item: WorkItem;
  /** The create got its 2xx answer. */
  acknowledged: boolean;
  /** Sent at all (the replica was up when its time came). */
  sent: boolean;
  id: string | undefined;
  /** Messages whose 202 came back (each must then be stored). */
  messagesAcknowledged: number;
}

export interface RoundOutcome {
  readonly round: number;
  readonly killedInstanceId: string;
  readonly restartedInstanceId: string;
  readonly killAtMs: number;
  /** Restarts that failed (the process exited before it listened), each tried again under a new INSTANCE_ID. */
  readonly restartFailures: readonly string[];
  readonly submitted: readonly Submitted[];
  /** Turn requests answered only when their turn ends: awaited before the checks. */
  readonly pending: readonly Promise<void>[];
}

const CREATE_TIMEOUT_MS = 30_000;

/**
 * One round: submits the plan's items at their times (to their replica), kills the planned
 * replica's process group at the planned instant, waits for the creates in flight to settle,
 * and restarts the replica on the same data folder / database.
 */
export async function runRound(plan: RoundPlan, deployment: Deployment): Promise<RoundOutcome> {
  const startedAt = performance.now();
  const pending: Promise<void>[] = [];
  const submitted = plan.items.map((item): Submitted => ({ item, acknowledged: false, sent: false, id: undefined, messagesAcknowledged: 0 }));
  const creates = submitted.map(async (entry) => {
    await sleepUntil(startedAt + entry.item.submitAtMs);
    await submit(entry, deployment, pending);
  });
  await sleepUntil(startedAt + plan.killAtMs);
  const killedInstanceId = await deployment.kill(plan.killSlot);
  await Promise.all(creates);
  // A replica that cannot start after a crash is a finding, not the end of the torture: it is
  // reported, and started again as an orchestrator would.
  const restartFailures: string[] = [];
  let restartedInstanceId: string | undefined;
  for (let attempt = 0; restartedInstanceId === undefined; attempt += 1) {
    try {
      restartedInstanceId = await deployment.restart(plan.killSlot, { sameInstanceId: plan.sameInstanceId && attempt === 0 });
    } catch (error) {
      restartFailures.push(error instanceof Error ? error.message : String(error));
      if (attempt >= 2) throw error;
    }
  }
  return { round: plan.round, killedInstanceId, restartedInstanceId, killAtMs: plan.killAtMs, restartFailures, submitted, pending };
}

async function submit(entry: Submitted, deployment: Deployment, pending: Promise<void>[]): Promise<void> {
  const { item } = entry;
  const baseUrl = deployment.baseUrl(item.slot);
  if (baseUrl === undefined) return;
  entry.sent = true;
  const request = fetch(`${baseUrl}${item.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(item.body),
    signal: AbortSignal.timeout(item.kind === 'turn' ? 120_000 : CREATE_TIMEOUT_MS),
  });
  if (item.kind === 'turn') {
    // A JSON turn request is answered when the turn ends: it is not waited for here.
    pending.push(
      request.then(
        async (response) => {
          entry.acknowledged = response.ok;
          await response.arrayBuffer();
        },
        () => undefined,
      ),
    );
    return;
  }
  try {
    const response = await request;
    const body = (await response.json()) as { id?: unknown };
    if (response.ok && typeof body.id === 'string') {
      entry.acknowledged = true;
      entry.id = body.id;
    }
  } catch {
    // Killed before it answered: the item may or may not exist; the checks look it up by agent.
    return;
  }
  if (item.kind !== 'job' || entry.id === undefined) return;
  const jobId = entry.id;
  const sentAt = performance.now();
  await Promise.all(
    item.messages.map(async (message) => {
      await sleepUntil(sentAt + message.afterMs);
      const url = deployment.baseUrl(item.slot);
      if (url === undefined) return;
      try {
        const response = await fetch(`${url}/background-jobs/${jobId}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: message.text }),
          signal: AbortSignal.timeout(CREATE_TIMEOUT_MS),
        });
        await response.arrayBuffer();
        if (response.status === 202) entry.messagesAcknowledged += 1;
      } catch {
        // Killed before it answered.
      }
    }),
  );
}

export async function sleepUntil(at: number): Promise<void> {
  const wait = at - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
