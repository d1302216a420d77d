import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type OpenAI from 'openai';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { pause, whenAborted } from '../concurrency/wait.js';
import type { ToolCatalog } from '../loop/tool-catalog.js';
import { DuplicateToolError } from '../loop/tool-map.js';
import { ServiceError, turnNotFound } from '../service-error.js';
import type { AdmissionRequest } from '../store/coordination-store.js';
import type { StoredEvent, TurnRecord, TurnStore, TurnToolsRecord } from '../store/turn-store.js';
import type { ToolServices } from './assembly/tool-services.js';
import { createTurnToolCatalog, resolveToolSearchMode } from './create-turn-tool-catalog.js';
import { driveTurn } from './drive-turn.js';
import { planTurn, type PlannedTurn } from './plan-turn.js';
import { toToolSnapshot } from './provider-tools.js';
import { readStoredEvents } from './read-stored-events.js';
import type { TurnRequest } from './turn-request.js';
import { TurnRun } from './turn-run.js';
import { CancelWatcher } from './coordination/cancel-watcher.js';
import { IDEMPOTENCY_KEY_TTL_MS, idempotencyClaim } from './coordination/idempotency-key.js';
import { SignalWaiter } from './coordination/signal-waiter.js';
import type { TurnSignals } from './coordination/turn-signals.js';
import { waitForAgent } from './coordination/wait-for-agent.js';
import type { CancelReason } from './turn-events.js';
import { resolveTurnOutcome } from './turn-outcome.js';

export interface TurnServiceOptions {
  readonly config: Config;
  readonly store: TurnStore;
  readonly services: ToolServices;
  /** The model provider's SDK client, shared by every turn; undefined when none is configured. */
  readonly openAIClient: OpenAI | undefined;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly newTurnId: () => string;
  /** Names this process in the store; its turns left running by a previous life are interrupted. */
  readonly instanceId: string;
  /** True when other replicas share the store, so only stale heartbeats mark a turn orphaned. */
  readonly sharedStore: boolean;
  /** Wake-ups between the processes sharing the store (LISTEN/NOTIFY on PostgreSQL). */
  readonly signals: TurnSignals;
}

/** Options of one start; everything else is in the request. */
export interface StartTurnOptions {
  /**
   * Makes the start idempotent: within `scope`, the same `key` with the same request never
   * starts a second turn (on any replica), and with a different request is `422
   * idempotency_key_reused`. Scope it to whoever sends the key (a token digest, a job id …).
   */
  readonly idempotency?: { readonly scope: string; readonly key: string };
}

/** What `submitTurn` did: started a turn in this process, or found the one an idempotency key already made. */
export type TurnSubmission = { readonly kind: 'started'; readonly run: TurnRun } | { readonly kind: 'replayed'; readonly turnId: string };

/**
 * Liveness across replicas: each process refreshes its turns every HEARTBEAT_MS; another
 * process ends a turn whose heartbeat is ORPHAN_AFTER_MS old, looking every SWEEP_MS. So a
 * dead replica's turns end `interrupted` within ORPHAN_AFTER_MS + HEARTBEAT_MS + SWEEP_MS
 * (14 s) of its death, while a replica has to miss five heartbeats in a row to be presumed dead.
 */
const HEARTBEAT_MS = 2_000;
const ORPHAN_AFTER_MS = 10_000;
const SWEEP_MS = 2_000;
/** A single process (SQLite) has nobody to prove its liveness to: it sweeps its own turns at start only. */
const LOCAL_HEARTBEAT_MS = 15_000;
const PURGE_MS = 10 * 60_000;
/** How long a cancel through another replica waits for the owner to end the turn before answering. */
const REMOTE_CANCEL_WAIT_MS = 5_000;

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
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #cancelWatcher: CancelWatcher;
  #draining = false;

  private constructor(options: TurnServiceOptions) {
    this.#options = options;
    this.#cancelWatcher = new CancelWatcher({ store: options.store, signals: options.signals, runs: this.#runs, logger: options.logger });
  }

  /** Interrupts turns a dead process left running, then starts the heartbeat and the sweep. */
  static async start(options: TurnServiceOptions): Promise<TurnService> {
    const service = new TurnService(options);
    // At start, this process's own turns are a previous life's, whatever their heartbeat says.
    await service.#sweepOrphans({ ageMs: options.sharedStore ? ORPHAN_AFTER_MS : 0, includeOwn: true });
    service.#every(options.sharedStore ? HEARTBEAT_MS : LOCAL_HEARTBEAT_MS, 'turn heartbeat', () => service.#heartbeat());
    if (options.sharedStore) service.#every(SWEEP_MS, 'orphan sweep', () => service.#sweepOrphans({ ageMs: ORPHAN_AFTER_MS, includeOwn: false }));
    service.#every(PURGE_MS, 'idempotency key purge', () =>
      options.store.purgeCoordination({ before: new Date(options.clock.now().getTime() - IDEMPOTENCY_KEY_TTL_MS).toISOString() }),
    );
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
  async startTurn(request: TurnRequest): Promise<TurnRun> {
    const submission = await this.submitTurn(request);
    if (submission.kind === 'started') return submission.run;
    // Unreachable without an idempotency key; said plainly rather than asserted away.
    throw new Error(`turn "${submission.turnId}" was replayed without an idempotency key`);
  }

  /**
   * `startTurn` with options: with an idempotency key, a repeated request answers the turn it
   * made (`replayed`, which may be running on another replica) instead of starting another.
   */
  async submitTurn(request: TurnRequest, options: StartTurnOptions = {}): Promise<TurnSubmission> {
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
    const turnId = this.#options.newTurnId();
    const turnLogger = logger.child({ turnId, agentId: request.agent.id });
    const home = path.join(config.dataDir, 'agents', request.agent.id, 'home');
    const plan = await planTurn({
      request,
      turnId,
      home,
      config,
      services: this.#options.services,
      store,
      openAIClient: this.#options.openAIClient,
      logger: turnLogger,
    });
    const catalog = catalogFor(plan, request, config);
    await mkdir(home, { recursive: true, mode: 0o700 });
    // Workflow task turns have no home tools, and `concurrent` turns accept sharing it: neither takes the agent.
    const takesAgent = request.kind === 'text' && request.multitask !== 'concurrent';
    const admissionRequest: AdmissionRequest = {
      turn: {
        record: {
          id: turnId,
          agentId: request.agent.id,
          kind: request.kind,
          status: 'running',
          model: plan.model.model,
          createdAt: clock.now().toISOString(),
          finishedAt: null,
          iterations: 0,
          output: null,
          error: null,
          outcome: null,
          usage: { inputTokens: 0, outputTokens: 0 },
        },
        owner: this.#options.instanceId,
        toolsJson: JSON.stringify(toToolSnapshot(plan.tools)),
        unavailableJson: JSON.stringify(plan.unavailable),
        providerToolsJson: catalog.providerTools().json,
        ...(plan.task === undefined ? {} : { task: plan.task }),
      },
      ...(claim === undefined ? {} : { idempotency: claim }),
      ...(takesAgent ? { agent: { mode: request.multitask === 'reject' || request.multitask === 'interrupt' ? request.multitask : 'enqueue', queueLimit: config.limits.agentQueueLimit } } : {}),
    };
    const admission = await store.admitTurn(admissionRequest);
    if (admission.kind === 'replay') return { kind: 'replayed', turnId: admission.turnId };
    if (admission.kind === 'key_reused') throw idempotencyKeyReused(admission.turnId);
    if (admission.kind === 'busy') throw agentBusy(request.agent.id, admission.reason, config.limits.agentQueueLimit);

    const run = new TurnRun({ id: turnId, agentId: request.agent.id, kind: request.kind, store, clock, logger: turnLogger });
    this.#runs.set(turnId, run);
    const limits = request.limits ?? {};
    const start = async (): Promise<void> => {
      run.emit({
        type: 'turn.started',
        agentId: request.agent.id,
        kind: request.kind,
        model: plan.model.model,
        tools: plan.tools.map((tool) => tool.name),
        unavailableSources: [...plan.unavailable],
      });
      await driveTurn({
        run,
        plan,
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
    void this.#runAdmitted({ run, queued: admission.kind === 'queued', takesAgent, start, logger: turnLogger });
    return { kind: 'started', run };
  }

  /** Waits for the agent when queued, runs the turn, then gives the agent back and wakes whoever waits for it. */
  async #runAdmitted(options: { run: TurnRun; queued: boolean; takesAgent: boolean; start: () => Promise<void>; logger: Logger }): Promise<void> {
    const { run, logger } = options;
    const { store, signals, clock, instanceId } = this.#options;
    try {
      const holdsAgent =
        !options.queued || (await waitForAgent({ store, signals, clock, turnId: run.id, agentId: run.agentId, owner: instanceId, signal: run.signal }));
      this.#queued.delete(run.id);
      if (holdsAgent) await options.start();
      else {
        // Cancelled while it waited: it never started, so there is no `turn.started`.
        const terminal = resolveTurnOutcome({ outcome: { kind: 'cancelled', iterations: 0, usage: { inputTokens: 0, outputTokens: 0 } }, kind: run.kind, maxIterations: 0, cancelReason: run.cancelReason });
        await run.finish(terminal.event, terminal.finish);
      }
    } catch (error) {
      logger.error({ err: error }, 'a turn could not be finished');
    } finally {
      this.#queued.delete(run.id);
      this.#runs.delete(run.id);
      if (options.takesAgent) {
        await store.releaseAgentLease({ agentId: run.agentId, turnId: run.id }).catch((error: unknown) => {
          logger.error({ err: error }, 'could not give the agent back; the next turn takes it over');
        });
        await signals.publish('agent', run.agentId);
      }
    }
  }

  async getTurn(turnId: string): Promise<TurnRecord> {
    const record = await this.#options.store.getTurn(turnId);
    if (record === undefined) throw turnNotFound(turnId);
    return record;
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
    const live = record.status === 'running' || record.status === 'queued';
    if (!live || !this.#options.sharedStore) {
      const why = live ? 'is not running in this server process' : `has already ended (${record.status})`;
      throw new ServiceError({ statusCode: 409, code: 'turn_not_running', message: `turn "${turnId}" ${why}` });
    }
    await this.#cancelAnywhere(turnId, 'cancel_requested');
    return this.#waitForEnd(turnId, REMOTE_CANCEL_WAIT_MS);
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

  /** The turn's record once it has ended, or as it is after `timeoutMs`. */
  async #waitForEnd(turnId: string, timeoutMs: number): Promise<TurnRecord> {
    const waiter = new SignalWaiter({ signals: this.#options.signals, topic: 'events', id: turnId });
    const deadline = performance.now() + timeoutMs;
    try {
      for (;;) {
        const record = await this.getTurn(turnId);
        const remaining = deadline - performance.now();
        if ((record.status !== 'running' && record.status !== 'queued') || remaining <= 0) return record;
        await waiter.wait(Math.min(remaining, 100));
      }
    } finally {
      waiter.dispose();
    }
  }

  /**
   * Delivers a turn's events after `afterSeq`: from memory when the turn runs here, otherwise
   * from the store. With `follow`, keeps delivering live events (polling the store while
   * another replica runs the turn) and resolves after the terminal one or when `signal`
   * aborts; without, resolves after what exists now.
   */
  async streamEvents(options: {
    turnId: string;
    afterSeq: number;
    follow: boolean;
    signal: AbortSignal;
    onEvent: (event: StoredEvent) => void;
  }): Promise<void> {
    const { turnId, signal, onEvent, follow } = options;
    const run = this.#runs.get(turnId);
    if (run !== undefined) {
      const unsubscribe = run.subscribe(options.afterSeq, (_event, stored) => {
        onEvent(stored);
      });
      if (follow) await Promise.race([run.done, whenAborted(signal)]);
      unsubscribe();
      return;
    }
    await this.getTurn(turnId);
    // Another replica runs it: its committed events signal us (NOTIFY), so the tail does not wait out a poll.
    const waiter = follow ? new SignalWaiter({ signals: this.#options.signals, topic: 'events', id: turnId }) : undefined;
    const read = await readStoredEvents({
      store: this.#options.store,
      turnId,
      afterSeq: options.afterSeq,
      follow,
      signal,
      onEvent,
      runsHere: () => this.#runs.has(turnId),
      ...(waiter === undefined ? {} : { waitForMore: (pollMs: number, abort: AbortSignal) => waiter.wait(pollMs, abort) }),
    }).finally(() => waiter?.dispose());
    // The turn started running here while we polled (a retried request): follow it from memory.
    if (!read.ended && follow && !signal.aborted && this.#runs.has(turnId)) await this.streamEvents({ ...options, afterSeq: read.lastSeq });
  }

  /** Stops taking turns (readiness turns 503). */
  beginDrain(): void {
    this.#draining = true;
  }

  /** Drains: waits up to the grace period for running turns, then cancels the rest. */
  async shutdown(): Promise<void> {
    this.beginDrain();
    for (const timer of this.#timers) clearInterval(timer);
    // A queued turn has not started: it ends now rather than start during the drain.
    for (const turnId of this.#queued) this.#runs.get(turnId)?.cancel('shutdown');
    const runs = [...this.#runs.values()];
    await Promise.race([Promise.all(runs.map((run) => run.done)), pause(this.#options.config.http.shutdownGraceMs)]);
    for (const run of this.#runs.values()) run.cancel('shutdown');
    await Promise.all(runs.map((run) => run.done));
    this.#cancelWatcher.stop();
  }

  /**
   * Proves this process's turns alive. A turn the store no longer holds as live was ended by
   * another replica that presumed this one dead (it missed its heartbeats): nothing it does
   * now can be stored, so it stops, and its tools with it.
   */
  async #heartbeat(): Promise<void> {
    const { store, clock, logger } = this.#options;
    const runs = [...this.#runs.values()];
    if (runs.length === 0) return;
    const alive = new Set(await store.heartbeat(runs.map((run) => run.id), clock.now().toISOString()));
    for (const run of runs) {
      if (alive.has(run.id) || run.finished) continue;
      logger.error({ turnId: run.id }, 'another replica ended this turn while it ran here (its heartbeats were late); stopping it');
      run.cancel('shutdown');
    }
  }

  async #sweepOrphans(options: { ageMs: number; includeOwn: boolean }): Promise<void> {
    const { store, clock, logger, instanceId } = this.#options;
    const now = clock.now();
    const interrupted = await store.interruptOrphans({
      ...(options.includeOwn ? { owner: instanceId } : {}),
      staleBefore: new Date(now.getTime() - options.ageMs).toISOString(),
      now: now.toISOString(),
    });
    if (interrupted.length > 0) logger.warn({ turns: interrupted }, 'turns left running by a stopped process were marked interrupted');
  }

  #every(intervalMs: number, what: string, task: () => Promise<unknown>): void {
    const timer = setInterval(() => {
      task().catch((error: unknown) => {
        this.#options.logger.warn({ err: error }, `${what} failed`);
      });
    }, intervalMs);
    timer.unref();
    this.#timers.push(timer);
  }
}

function idempotencyKeyReused(turnId: string): ServiceError {
  return new ServiceError({
    statusCode: 422,
    code: 'idempotency_key_reused',
    message: `this Idempotency-Key already made turn "${turnId}" with a different request body; use a new key for a new request`,
  });
}

function agentBusy(agentId: string, reason: 'running' | 'queue_full', queueLimit: number): ServiceError {
  const message =
    reason === 'running'
      ? `agent "${agentId}" already has a turn running (multitask "reject"); retry when it ends, or send multitask "enqueue"`
      : `agent "${agentId}" already has ${queueLimit} turns queued (AGENT_QUEUE_LIMIT); retry when one has run`;
  return new ServiceError({ statusCode: 409, code: 'agent_busy', message });
}

/** The turn's tool catalog; two tools with one identity is the server's fault (a 500 that says which). */
function catalogFor(plan: PlannedTurn, request: TurnRequest, config: Config): ToolCatalog {
  try {
    return createTurnToolCatalog({ tools: plan.tools, toolSearchMode: resolveToolSearchMode({ model: request.model, configured: config.toolSearchMode }) });
  } catch (error) {
    if (error instanceof DuplicateToolError) throw new ServiceError({ statusCode: 500, code: 'tool_assembly_failed', message: error.message });
    throw error;
  }
}
