import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ServiceMetrics } from '../observability/service-metrics.js';
import { ServiceError, turnNotFound } from '../service-error.js';
import type { TurnStore } from '../store/turn-store.js';
import type { StoredEvent, TurnRecord } from '../store/turn-record.js';
import type { ParkedLoop, TurnApprovals } from '../turns/turn-approvals.js';
import type { TurnEvent } from '../events/turn-events.js';
import type { TurnRequest } from '../turns/turn-request.js';
import type { TurnRun } from '../turns/turn-run.js';
import type { ApprovalDecision, NewApproval, StoredApproval } from '../store/approval-store.js';
import { createApprovalGate } from './create-approval-gate.js';
import { toContinuation } from './turn-continuation.js';

export interface ApprovalServiceOptions {
  readonly store: TurnStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** APPROVAL_TIMEOUT_MS: a wait this long ends as a denial. */
  readonly timeoutMs: number;
  /** This process, as the store names turn owners. */
  readonly owner: string;
  /** Where decided waits are timed (`approvalWait`). */
  readonly metrics: ServiceMetrics;
}

/** What `POST /turns/:id/approvals/:callId` answers. */
export interface ApprovalDecisionView {
  readonly turnId: string;
  readonly callId: string;
  readonly name: string;
  readonly decision: ApprovalDecision;
  readonly message?: string;
  readonly decidedAt: string;
  readonly turnStatus: 'requires_action' | 'running';
}

/** What deciding needs from the turns that run here: given at `start`, once the turn service exists. */
export interface ApprovalServiceTurns {
  /** Goes on with a turn this process has just claimed (its last pending call was decided). */
  readonly resume: (turnId: string) => Promise<void>;
  /** False while the process drains: it takes no decision, since it would have to run the turn. */
  readonly accepting: () => boolean;
}

const EXPIRED_PAGE = 100;
const MAX_SWEEP_MS = 60_000;
const MIN_SWEEP_MS = 250;

/**
 * Approvals on the server side: parks turns whose calls wait for a person, records decisions
 * (bound to turn, call id and arguments hash), ends waits that time out, cancels parked turns,
 * and hands a turn whose last call was decided back to the turn service to go on. Everything
 * goes through the store, so any replica (or this process after a restart) can take any step.
 */
export class ApprovalService {
  readonly #options: ApprovalServiceOptions;
  readonly #timers = new Set<NodeJS.Timeout>();
  #sweeping: Promise<void> = Promise.resolve();
  /** Until `start`, nothing is decided: a decision may have to resume its turn. */
  #turns: ApprovalServiceTurns | undefined;

  constructor(options: ApprovalServiceOptions) {
    this.#options = options;
  }

  /** Ends the waits that ran out while no process watched them, then keeps watching. */
  start(turns: ApprovalServiceTurns): void {
    this.#turns = turns;
    this.#requestSweep();
    const interval = setInterval(
      () => {
        this.#requestSweep();
      },
      Math.min(MAX_SWEEP_MS, Math.max(MIN_SWEEP_MS, this.#options.timeoutMs / 2)),
    );
    interval.unref();
    this.#timers.add(interval);
  }

  stop(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  /** The gate and the parking for a turn; undefined when its policy lets everything run. */
  forTurn(options: { readonly run: TurnRun; readonly request: TurnRequest; readonly parkedCallIds?: Iterable<string> }): TurnApprovals | undefined {
    const policy = options.request.agent.approvals;
    if (policy === undefined) return undefined;
    return {
      gate: createApprovalGate({ policy, parkedCallIds: new Set(options.parkedCallIds ?? []) }),
      park: (parked) => this.#park({ run: options.run, request: options.request, parked }),
    };
  }

  async decide(options: {
    readonly turnId: string;
    readonly callId: string;
    readonly decision: ApprovalDecision;
    readonly message?: string | undefined;
    readonly argumentsHash: string;
  }): Promise<ApprovalDecisionView> {
    const { turnId, callId } = options;
    const turns = this.#turns;
    if (turns?.accepting() !== true) throw new ServiceError({ statusCode: 503, code: 'shutting_down', message: 'the server is shutting down; send the decision again (to another replica)' });
    const outcome = await this.#record({ ...options, reason: undefined }, turns);
    switch (outcome.kind) {
      case 'turn_not_found':
        throw turnNotFound(turnId);
      case 'approval_not_found':
        throw new ServiceError({ statusCode: 404, code: 'approval_not_found', message: `turn "${turnId}" never waited for approval of a call "${callId.slice(0, 200)}"` });
      case 'not_pending':
        throw new ServiceError({ statusCode: 409, code: 'approval_not_pending', message: `call "${callId.slice(0, 200)}" is not waiting for a decision: ${outcome.why}` });
      case 'mismatch':
        throw new ServiceError({
          statusCode: 422,
          code: 'approval_mismatch',
          message: `argumentsHash is not the hash of the pending call's arguments (${outcome.expected}); read the call again before deciding`,
        });
      case 'decided':
        break;
    }
    const { approval } = outcome;
    return {
      turnId,
      callId,
      name: approval.name,
      decision: options.decision,
      ...(approval.message === null ? {} : { message: approval.message }),
      decidedAt: approval.decidedAt ?? this.#options.clock.now().toISOString(),
      turnStatus: outcome.claimed ? 'running' : 'requires_action',
    };
  }

  /** Cancels a parked turn; resolves with its final record, or undefined when it is not parked. */
  async cancelParked(options: { readonly record: TurnRecord }): Promise<TurnRecord | undefined> {
    const { record } = options;
    const { store, clock } = this.#options;
    const at = clock.now().toISOString();
    const reason = 'cancel_requested';
    const error = { code: 'cancelled', message: 'the turn was cancelled on request', reason };
    const cancelled = await store.approvals.cancelParked({
      turnId: record.id,
      finish: { status: 'cancelled', iterations: record.iterations, usage: record.usage, output: null, error, outcome: 'cancelled', finishedAt: at },
      event: (seq) => stored({ type: 'turn.cancelled', turnId: record.id, seq, at, reason, iterations: record.iterations, usage: record.usage }),
    });
    return cancelled ? store.getTurn(record.id) : undefined;
  }

  /** Stores the decision and its event; claims and resumes the turn when it was the last one. */
  async #record(options: {
    readonly turnId: string;
    readonly callId: string;
    readonly decision: ApprovalDecision;
    readonly message?: string | undefined;
    readonly reason: 'timeout' | undefined;
    readonly argumentsHash: string | undefined;
  }, turns: ApprovalServiceTurns) {
    const { store, clock, owner } = this.#options;
    const at = clock.now().toISOString();
    const outcome = await store.approvals.decide({
      turnId: options.turnId,
      callId: options.callId,
      decision: options.decision,
      message: options.message,
      reason: options.reason,
      argumentsHash: options.argumentsHash,
      at,
      owner,
      event: (approval: StoredApproval, seq: number) =>
        stored({
          type: 'tool.approval_decided',
          turnId: options.turnId,
          seq,
          at,
          callId: approval.callId,
          name: approval.name,
          decision: options.decision,
          ...(options.message === undefined ? {} : { message: options.message }),
          ...(options.reason === undefined ? {} : { reason: options.reason }),
        }),
    });
    if (outcome.kind === 'decided') {
      const waitedMs = Date.parse(at) - Date.parse(outcome.approval.requestedAt);
      this.#options.metrics.approvalWait.observe({ decision: options.reason ?? options.decision }, Math.max(0, waitedMs) / 1000);
    }
    if (outcome.kind === 'decided' && outcome.claimed) {
      // The claim is ours: whatever happens, the turn goes on (or is ended) by this process.
      await turns.resume(options.turnId).catch((error: unknown) => {
        this.#options.logger.error({ err: error, turnId: options.turnId }, 'a decided turn could not be resumed');
      });
    }
    return outcome;
  }

  async #park(options: { readonly run: TurnRun; readonly request: TurnRequest; readonly parked: ParkedLoop }): Promise<void> {
    const { run, parked } = options;
    const { store, clock, timeoutMs } = this.#options;
    const { batch } = parked.outcome;
    const now = clock.now();
    const requestedAt = now.toISOString();
    const expiresAt = new Date(now.getTime() + timeoutMs).toISOString();
    const approvals: NewApproval[] = batch.parked.map((entry) => ({
      turnId: run.id,
      callId: entry.call.callId,
      position: entry.index,
      iteration: batch.iteration,
      name: entry.request.name,
      ...(entry.request.namespace === undefined ? {} : { namespace: entry.request.namespace }),
      arguments: entry.request.arguments,
      argumentsHash: entry.request.argumentsHash,
      label: entry.request.label,
      requestedAt,
      expiresAt,
    }));
    const continuationJson = JSON.stringify(toContinuation({ request: options.request, parked }));
    await run.suspend(
      approvals.map((approval) => ({
        type: 'tool.approval_requested',
        callId: approval.callId,
        name: approval.name,
        ...(approval.namespace === undefined ? {} : { namespace: approval.namespace }),
        arguments: approval.arguments,
        argumentsHash: approval.argumentsHash,
        label: approval.label,
        iteration: approval.iteration,
        expiresAt,
      })),
      (events) =>
        store.approvals.park({
          turnId: run.id,
          events,
          approvals,
          continuationJson,
          iterations: parked.outcome.iterations,
          usage: parked.outcome.usage,
          at: requestedAt,
        }),
    );
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#requestSweep();
    }, timeoutMs);
    timer.unref();
    this.#timers.add(timer);
  }

  /** One sweep at a time; a request during a sweep runs another after it. */
  #requestSweep(): void {
    this.#sweeping = this.#sweeping
      .then(() => this.#sweepExpired())
      .catch((error: unknown) => {
        this.#options.logger.warn({ err: error }, 'ending expired approval waits failed');
      });
  }

  async #sweepExpired(): Promise<void> {
    const { store, clock } = this.#options;
    const turns = this.#turns;
    if (turns === undefined) return;
    while (turns.accepting()) {
      const expired = await store.approvals.listExpired({ now: clock.now().toISOString(), limit: EXPIRED_PAGE });
      for (const entry of expired) {
        // Another replica may take the same one: only the first decision counts, the rest find it decided.
        await this.#record({ turnId: entry.turnId, callId: entry.callId, decision: 'deny', reason: 'timeout', argumentsHash: undefined, message: 'no decision before the approval timeout' }, turns);
      }
      if (expired.length < EXPIRED_PAGE) return;
    }
  }
}

function stored(event: TurnEvent): StoredEvent {
  return { seq: event.seq, type: event.type, json: JSON.stringify(event) };
}
