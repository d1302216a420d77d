import type { ResponsesEndpoint } from '../models/responses-endpoint.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { pause } from '../concurrency/wait.js';
import type { Observability } from '../observability/observability.js';
import { observeTurn, type TraceHeaders } from './observability/observe-turn.js';
import { invalidRequest, ServiceError, turnNotFound } from '../service-error.js';
import type { TurnStore } from '../store/turn-store.js';
import type { TurnListQuery, TurnRecord, TurnToolsRecord } from '../store/turn-record.js';
import type { ToolServices } from './assembly/tool-services.js';
import type { ResumedTurn, TurnApprovalsProvider } from './turn-approvals.js';
import { admissionFor } from './admission-request.js';
import { agentHomePath, prepareAgentHome } from './agent-home.js';
import { catalogForTurn } from './create-turn-tool-catalog.js';
import { driveTurn } from './drive-turn.js';
import { planTurn } from './plan-turn.js';
import type { TurnWebhooks } from './turn-webhooks.js';
import { crashPoint } from '../durable/crash-points.js';
import { followTurnEvents, type EventSink } from './follow-turn-events.js';
import { isEndedStatus } from './turn-status.js';
import type { StartTurnRequest } from './turn-origin.js';
import { TurnRun } from './turn-run.js';
import { CancelWatcher } from './coordination/cancel-watcher.js';
import { agentBusy, idempotencyKeyReused } from './coordination/coordination-errors.js';
import { idempotencyClaim } from './coordination/idempotency-key.js';
import { SignalWaiter } from './coordination/signal-waiter.js';
import type { TurnSignals } from './coordination/turn-signals.js';
import { runAdmittedTurn } from './coordination/run-admitted-turn.js';
import { TurnLiveness } from './coordination/turn-liveness.js';
import { waitForTurnEnd } from './coordination/wait-for-turn-end.js';
import type { CancelReason } from '../events/turn-events.js';

export interface TurnServiceOptions {
  readonly config: Config;
  readonly store: TurnStore;
  readonly services: ToolServices;
  /** The model provider's SDK client, shared by every turn; undefined when none is configured. */
  readonly modelEndpoint: ResponsesEndpoint | undefined;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly newTurnId: () => string;
  /** Names this process in the store; its turns left running by a previous life are interrupted. */
  readonly instanceId: string;
  /** True when other replicas share the store, so only stale heartbeats mark a turn orphaned. */
  readonly sharedStore: boolean;
  /** Wake-ups between the processes sharing the store (LISTEN/NOTIFY on PostgreSQL). */
  readonly signals: TurnSignals;
  /** Checks and sends a turn request's `webhook`; without it, a request with one is refused. */
  readonly turnWebhooks?: TurnWebhooks;
  /** Metrics, and tracing when it is on; every turn is watched through it. */
  readonly observability: Observability;
  /** Gates and parks the calls a turn's approval policy asks a person about (src/approvals). */
  readonly approvals: TurnApprovalsProvider;
}

/** Options of one start; everything else is in the request. */
export interface StartTurnOptions {
  /**
   * Makes the start idempotent: within `scope`, the same `key` with the same request never
   * starts a second turn (on any replica), and with a different request is `422
   * idempotency_key_reused`. Scope it to whoever sends the key (a token digest, a job id …).
   */
  readonly idempotency?: { readonly scope: string; readonly key: string };
  /** The caller's W3C trace context (`traceparent`, `tracestate`): the turn's span joins that trace. */
  readonly traceHeaders?: TraceHeaders;
  /**
   * The id to give the turn, for a caller that records it before the start (a background job
   * stores its next turn's id first, so a crash between the two cannot lose the turn). Pair it
   * with `idempotency`: a second start of the same turn is then a replay, not a conflict.
   */
  readonly turnId?: string;
}

/** What `submitTurn` did: started a turn in this process, or found the one an idempotency key already made. */
export type TurnSubmission = { readonly kind: 'started'; readonly run: TurnRun } | { readonly kind: 'replayed'; readonly turnId: string };

/** How long a cancel through another replica waits for the owner to end the turn before answering. */
const REMOTE_CANCEL_WAIT_MS = 5_000;
/** How long a tail of a turn on another replica waits for a NOTIFY before it reads the store anyway. */
const FOLLOW_POLL_MS = 500;

/**
 * Runs turns: plans them, creates their records, drives the loop in the background, and ends
 * each with exactly one stored terminal event. Also the place that knows which turns run in
 * this process, for streaming, cancellation and shutdown.
 */
export class TurnService {
  readonly #options: TurnServiceOptions;
  readonly #runs = new Map<string, TurnRun>();
  /** Of #runs, those still waiting in their agent's queue. */
  readonly #queued = new Set<string>();
  readonly #cancelWatcher: CancelWatcher;
  #liveness: TurnLiveness | undefined;
  /** Aborts followers of turns that run nowhere here (parked, or on another replica) when the service closes. */
  readonly #closing = new AbortController();
  #draining = false;

  private constructor(options: TurnServiceOptions) {
    this.#options = options;
    this.#cancelWatcher = new CancelWatcher({ store: options.store, signals: options.signals, runs: this.#runs, logger: options.logger });
  }

  /** Interrupts turns a dead process left running, then starts the heartbeat and the sweep. */
  static async start(options: TurnServiceOptions): Promise<TurnService> {
    const service = new TurnService(options);
    service.#liveness = await TurnLiveness.start({
      store: options.store,
      clock: options.clock,
      logger: options.logger,
      instanceId: options.instanceId,
      sharedStore: options.sharedStore,
      runs: service.#runs,
    });
    return service;
  }

  get draining(): boolean {
    return this.#draining;
  }

  get runningCount(): number {
    return this.#runs.size;
  }

  /**
   * Validates, plans and starts a turn, following its `multitask` rule. Resolves once its
   * record and first event (`turn.started`, or `turn.queued` when it waits for its agent)
   * exist; `run.done` resolves at its end. The one path by which every turn starts: HTTP,
   * workflows, background jobs and schedules alike.
   */
  async startTurn(request: StartTurnRequest, options: Pick<StartTurnOptions, 'traceHeaders'> = {}): Promise<TurnRun> {
    const submission = await this.submitTurn(request, options);
    if (submission.kind === 'started') return submission.run;
    // Unreachable without an idempotency key; said plainly rather than asserted away.
    throw new Error(`turn "${submission.turnId}" was replayed without an idempotency key`);
  }

  /**
   * `startTurn` with options: with an idempotency key, a repeated request answers the turn it
   * made (`replayed`, which may be running on another replica) instead of starting another.
   */
  async submitTurn(request: StartTurnRequest, options: StartTurnOptions = {}): Promise<TurnSubmission> {
    const { config, store, clock, logger } = this.#options;
    if (this.#draining) throw new ServiceError({ statusCode: 503, code: 'shutting_down', message: 'the server is shutting down' });
    const claim = options.idempotency === undefined ? undefined : idempotencyClaim({ ...options.idempotency, body: request });
    if (claim !== undefined) {
      // Most retries find their key at once, and need no planning at all.
      const existing = await store.findIdempotencyKey(claim);
      if (existing !== undefined) {
        if (existing.bodyHash !== claim.bodyHash) throw idempotencyKeyReused(existing.turnId);
        return { kind: 'replayed', turnId: existing.turnId };
      }
    }
    if (this.#runs.size >= config.http.maxConcurrentTurns) {
      throw new ServiceError({ statusCode: 503, code: 'overloaded', message: 'too many turns are running; try again shortly' });
    }
    const webhook = request.webhook;
    if (webhook !== undefined) {
      if (this.#options.turnWebhooks === undefined) throw invalidRequest([{ path: ['webhook'], message: 'this server sends no webhooks' }]);
      this.#options.turnWebhooks.check(webhook.url);
    }
    const turnId = options.turnId ?? this.#options.newTurnId();
    const turnLogger = logger.child({ turnId, agentId: request.agent.id });
    const home = agentHomePath({ dataDir: config.dataDir, agentId: request.agent.id });
    const plan = await planTurn({
      request,
      turnId,
      home,
      config,
      services: this.#options.services,
      store,
      modelEndpoint: this.#options.modelEndpoint,
      logger: turnLogger,
    });
    const catalog = catalogForTurn({ tools: plan.tools, model: request.model, configured: config.toolSearchMode });
    prepareAgentHome(home);
    const { admissionRequest, startedBody, started, takesAgent } = admissionFor({
      turnId,
      request,
      plan,
      catalog,
      owner: this.#options.instanceId,
      claim,
      agentQueueLimit: config.limits.agentQueueLimit,
      clock,
    });
    const admission = await store.admitTurn(admissionRequest);
    if (admission.kind === 'replay') return { kind: 'replayed', turnId: admission.turnId };
    if (admission.kind === 'key_reused') throw idempotencyKeyReused(admission.turnId);
    if (admission.kind === 'busy') throw agentBusy({ agentId: request.agent.id, reason: admission.reason, queueLimit: config.limits.agentQueueLimit });

    const startedStored = admission.kind === 'running';
    const run = new TurnRun({
      id: turnId,
      agentId: request.agent.id,
      kind: request.kind,
      store,
      clock,
      logger: turnLogger,
      releasesAgent: takesAgent,
      ...(startedStored ? { history: [started] } : {}),
    });
    this.#runs.set(turnId, run);
    const limits = request.limits ?? {};
    const approvals = this.#options.approvals.forTurn({ run, request });
    const observed = observeTurn({
      observability: this.#options.observability,
      run,
      model: plan.model,
      provider: 'script' in request.model ? 'turn_runtime.scripted' : 'openai',
      traceHeaders: options.traceHeaders,
      logger: turnLogger,
      clock,
    });
    const start = async (): Promise<void> => {
      if (!startedStored) run.emit(startedBody);
      await driveTurn({
        ...(approvals === undefined ? {} : { approvals }),
        run,
        plan: { ...plan, model: observed.model },
        catalog,
        maxIterations: Math.min(limits.maxIterations ?? config.limits.defaultMaxIterations, config.limits.maxIterations),
        timeoutMs: Math.min(limits.timeoutMs ?? config.limits.defaultTimeoutMs, config.limits.maxTimeoutMs),
        config,
        store,
        clock,
        logger: turnLogger,
      });
    };
    if (admission.kind === 'queued') {
      this.#queued.add(turnId);
      run.emit({ type: 'turn.queued', position: admission.position });
      if (request.multitask === 'interrupt' && admission.holderTurnId !== undefined) {
        void this.#cancelAnywhere(admission.holderTurnId, 'superseded').catch((error: unknown) => {
          turnLogger.warn({ err: error, supersededTurnId: admission.holderTurnId }, 'could not interrupt the running turn of this agent');
        });
      }
    }
    const { signals, instanceId } = this.#options;
    void runAdmittedTurn({
      run,
      queued: admission.kind === 'queued',
      takesAgent,
      start,
      onLeftQueue: () => this.#queued.delete(turnId),
      store,
      signals,
      clock,
      owner: instanceId,
      logger: turnLogger,
    }).finally(() => {
      // A parked turn may already be running again here, as a new run.
      if (this.#runs.get(turnId) === run) this.#runs.delete(turnId);
      if (webhook !== undefined) void this.#sendTurnWebhook(turnId);
    });
    return { kind: 'started', run };
  }

  /** Moves the ended turn's stored webhook to the delivery queue (a parked turn has not ended: it waits). */
  async #sendTurnWebhook(turnId: string): Promise<void> {
    crashPoint('turn.ended');
    try {
      await this.#options.turnWebhooks?.ended(turnId);
    } catch (error) {
      // The outbox's sweep sends it.
      this.#options.logger.warn({ err: error, turnId }, 'could not queue the webhook of a turn now; the sweep will');
    }
  }

  async getTurn(turnId: string): Promise<TurnRecord> {
    const record = await this.#options.store.getTurn(turnId);
    if (record === undefined) throw turnNotFound(turnId);
    return record;
  }

  /** Recent turns, newest first, from the store (every replica's). */
  async listTurns(query: TurnListQuery): Promise<TurnRecord[]> {
    return this.#options.store.listTurns(query);
  }

  async getTurnTools(turnId: string): Promise<TurnToolsRecord> {
    const tools = await this.#options.store.getTurnTools(turnId);
    if (tools === undefined) throw turnNotFound(turnId);
    return tools;
  }

  /**
   * Cancels a queued or running turn and resolves with its record: at once when it runs here;
   * through the store (a cancel request its owner acts on) when another replica runs it, then
   * waiting up to REMOTE_CANCEL_WAIT_MS for the owner to end it.
   */
  async cancelTurn(turnId: string): Promise<TurnRecord> {
    const run = this.#runs.get(turnId);
    if (run !== undefined && !run.finished) {
      run.cancel('cancel_requested');
      await run.done;
      return this.getTurn(turnId);
    }
    const record = await this.getTurn(turnId);
    // A parked turn runs nowhere: it is cancelled in the store, from any replica.
    const parked = record.status === 'requires_action' ? await this.#options.approvals.cancelParked({ record }) : undefined;
    if (parked !== undefined) return parked;
    const live = record.status === 'running' || record.status === 'queued';
    if (!live || !this.#options.sharedStore) {
      const why = live ? 'is not running in this server process' : `has already ended (${record.status})`;
      throw new ServiceError({ statusCode: 409, code: 'turn_not_running', message: `turn "${turnId}" ${why}` });
    }
    await this.#cancelAnywhere(turnId, 'cancel_requested');
    return (await waitForTurnEnd({ store: this.#options.store, signals: this.#options.signals, turnId, timeoutMs: REMOTE_CANCEL_WAIT_MS })) ?? record;
  }

  /** Cancels a turn wherever it runs: directly here, else by a stored request its owner watches for. */
  async #cancelAnywhere(turnId: string, reason: CancelReason): Promise<void> {
    const run = this.#runs.get(turnId);
    if (run !== undefined) {
      run.cancel(reason);
      return;
    }
    await this.#options.store.requestCancel({ turnId, reason, at: this.#options.clock.now().toISOString() });
    await this.#options.signals.publish('cancel', turnId);
  }

  /**
   * Delivers a turn's events after `afterSeq` to `sink`, bounded by what the sink can hold
   * (see followTurnEvents): from memory while the turn runs here and the consumer keeps up,
   * from the store otherwise. With `follow`, until the terminal event, the end of the turn,
   * or `signal`; without, what is stored now.
   */
  async streamEvents(options: { turnId: string; afterSeq: number; follow: boolean; signal: AbortSignal; sink: EventSink }): Promise<void> {
    const { store } = this.#options;
    const { turnId, follow } = options;
    // Followers of turns that run nowhere here (parked, or on another replica) end when the service closes.
    const signal = AbortSignal.any([options.signal, this.#closing.signal]);
    // Another replica runs it: its committed events signal us (NOTIFY), so the tail does not wait out a poll.
    const waiter = follow ? new SignalWaiter({ signals: this.#options.signals, topic: 'events', id: turnId }) : undefined;
    try {
      await followTurnEvents({
        ...options,
        signal,
        store,
        // A suspended run (the turn parked) has ended here; the store has the rest, and a resumed run replaces it.
        localRun: () => {
          const run = this.#runs.get(turnId);
          return run?.suspended === true ? undefined : run;
        },
        hasEnded: async () => isEndedStatus((await this.getTurn(turnId)).status),
        ...(waiter === undefined ? {} : { waitForMore: (abort: AbortSignal) => waiter.wait(FOLLOW_POLL_MS, abort) }),
      });
    } finally {
      waiter?.dispose();
    }
  }

  /** True when the turn has ended and nothing is stored after `afterSeq` (its terminal event is at or before it). */
  async isOverAfter(turnId: string, afterSeq: number): Promise<boolean> {
    if (!isEndedStatus((await this.getTurn(turnId)).status)) return false;
    return (await this.#options.store.listEvents(turnId, { afterSeq, limit: 1 })).length === 0;
  }

  /** Stops taking turns (readiness turns 503). */
  beginDrain(): void {
    this.#draining = true;
  }

  /** Drains: waits up to the grace period for running turns, then cancels the rest. */
  async shutdown(): Promise<void> {
    this.beginDrain();
    this.#liveness?.stop();
    // A queued turn has not started: it ends now rather than start during the drain.
    for (const turnId of this.#queued) this.#runs.get(turnId)?.cancel('shutdown');
    const runs = [...this.#runs.values()];
    await Promise.race([Promise.all(runs.map((run) => run.done)), pause(this.#options.config.http.shutdownGraceMs)]);
    for (const run of this.#runs.values()) run.cancel('shutdown');
    await Promise.all(runs.map((run) => run.done));
    this.#cancelWatcher.stop();
    this.#closing.abort();
  }

  /**
   * Keeps a parked turn that this process claimed (its last call was decided) and set up again
   * (src/approvals/resume-parked-turn.ts): it streams, cancels and drains like any run here.
   */
  adopt(resumed: ResumedTurn): void {
    const { run, driving, webhookUrl } = resumed;
    const turnId = run.id;
    this.#runs.set(turnId, run);
    void driving
      .catch((error: unknown) => {
        this.#options.logger.error({ err: error, turnId }, 'a resumed turn could not be finished');
      })
      .finally(() => {
        if (this.#runs.get(turnId) === run) this.#runs.delete(turnId);
        if (webhookUrl !== undefined) void this.#sendTurnWebhook(turnId);
      });
  }
}
