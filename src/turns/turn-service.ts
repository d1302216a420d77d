import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type OpenAI from 'openai';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { pause, whenAborted } from '../concurrency/wait.js';
import type { ToolCatalog } from '../loop/tool-catalog.js';
import { DuplicateToolError } from '../loop/tool-map.js';
import { invalidRequest, ServiceError, turnNotFound } from '../service-error.js';
import type { StoredEvent, TurnRecord, TurnStore, TurnToolsRecord } from '../store/turn-store.js';
import type { ToolServices } from './assembly/tool-services.js';
import { createTurnToolCatalog, resolveToolSearchMode } from './create-turn-tool-catalog.js';
import { driveTurn } from './drive-turn.js';
import { planTurn, type PlannedTurn } from './plan-turn.js';
import { toToolSnapshot } from './provider-tools.js';
import { readStoredEvents } from './read-stored-events.js';
import type { TurnWebhooks } from '../webhooks/turn-webhooks.js';
import type { TurnRequest } from './turn-request.js';
import type { StartTurnRequest } from './turn-origin.js';
import { TurnRun } from './turn-run.js';

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
  /** Checks and sends a turn request's `webhook`; without it, a request with one is refused. */
  readonly turnWebhooks?: TurnWebhooks;
}

const HEARTBEAT_MS = 15_000;
const ORPHAN_AFTER_MS = 60_000;

/**
 * Runs turns: plans them, creates their records, drives the loop in the background, and ends
 * each with exactly one stored terminal event. Also the place that knows which turns run in
 * this process, for streaming, cancellation and shutdown.
 */
export class TurnService {
  readonly #options: TurnServiceOptions;
  readonly #runs = new Map<string, TurnRun>();
  readonly #timers: NodeJS.Timeout[] = [];
  #draining = false;

  private constructor(options: TurnServiceOptions) {
    this.#options = options;
  }

  /** Interrupts turns a dead process left running, then starts the heartbeat and the sweep. */
  static async start(options: TurnServiceOptions): Promise<TurnService> {
    const service = new TurnService(options);
    await service.#sweepOrphans(options.sharedStore ? ORPHAN_AFTER_MS : 0);
    service.#every(HEARTBEAT_MS, 'turn heartbeat', () => options.store.heartbeat([...service.#runs.keys()], options.clock.now().toISOString()));
    if (options.sharedStore) service.#every(ORPHAN_AFTER_MS / 2, 'orphan sweep', () => service.#sweepOrphans(ORPHAN_AFTER_MS));
    return service;
  }

  get draining(): boolean {
    return this.#draining;
  }

  get runningCount(): number {
    return this.#runs.size;
  }

  /** Validates, plans and starts a turn. Resolves once its record and `turn.started` exist. */
  async startTurn(request: StartTurnRequest): Promise<TurnRun> {
    const { config, store, clock, logger } = this.#options;
    if (this.#draining) throw new ServiceError({ statusCode: 503, code: 'shutting_down', message: 'the server is shutting down' });
    if (this.#runs.size >= config.http.maxConcurrentTurns) {
      throw new ServiceError({ statusCode: 503, code: 'overloaded', message: 'too many turns are running; try again shortly' });
    }
    const webhook = request.webhook;
    if (webhook !== undefined) {
      if (this.#options.turnWebhooks === undefined) throw invalidRequest([{ path: ['webhook'], message: 'this server sends no webhooks' }]);
      this.#options.turnWebhooks.check(webhook.url);
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
    await store.createTurn({
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
        ...request.origin,
      },
      owner: this.#options.instanceId,
      toolsJson: JSON.stringify(toToolSnapshot(plan.tools)),
      unavailableJson: JSON.stringify(plan.unavailable),
      providerToolsJson: catalog.providerTools().json,
      ...(plan.task === undefined ? {} : { task: plan.task }),
    });

    const run = new TurnRun({ id: turnId, agentId: request.agent.id, kind: request.kind, store, clock, logger: turnLogger });
    this.#runs.set(turnId, run);
    run.emit({
      type: 'turn.started',
      agentId: request.agent.id,
      kind: request.kind,
      model: plan.model.model,
      tools: plan.tools.map((tool) => tool.name),
      unavailableSources: [...plan.unavailable],
    });
    const limits = request.limits ?? {};
    void driveTurn({
      run,
      plan,
      catalog,
      maxIterations: Math.min(limits.maxIterations ?? config.limits.defaultMaxIterations, config.limits.maxIterations),
      timeoutMs: Math.min(limits.timeoutMs ?? config.limits.defaultTimeoutMs, config.limits.maxTimeoutMs),
      config,
      store,
      clock,
      logger: turnLogger,
    })
      .catch((error: unknown) => {
        turnLogger.error({ err: error }, 'a turn could not be finished');
      })
      .finally(() => {
        this.#runs.delete(turnId);
        if (webhook !== undefined) void this.#sendTurnWebhook(turnId, webhook.url);
      });
    return run;
  }

  async #sendTurnWebhook(turnId: string, url: string): Promise<void> {
    try {
      const record = await this.getTurn(turnId);
      await this.#options.turnWebhooks?.send({ url, record });
    } catch (error) {
      this.#options.logger.error({ err: error, turnId }, 'could not store the webhook of a turn');
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

  /** Cancels a running turn and resolves with its final record. */
  async cancelTurn(turnId: string): Promise<TurnRecord> {
    const run = this.#runs.get(turnId);
    if (run === undefined || run.finished) {
      const record = await this.getTurn(turnId);
      const why = record.status === 'running' ? 'is not running in this server process' : `has already ended (${record.status})`;
      throw new ServiceError({ statusCode: 409, code: 'turn_not_running', message: `turn "${turnId}" ${why}` });
    }
    run.cancel('cancel_requested');
    await run.done;
    return this.getTurn(turnId);
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
    const read = await readStoredEvents({ store: this.#options.store, turnId, afterSeq: options.afterSeq, follow, signal, onEvent, runsHere: () => this.#runs.has(turnId) });
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
    const runs = [...this.#runs.values()];
    await Promise.race([Promise.all(runs.map((run) => run.done)), pause(this.#options.config.http.shutdownGraceMs)]);
    for (const run of this.#runs.values()) run.cancel('shutdown');
    await Promise.all(runs.map((run) => run.done));
  }

  async #sweepOrphans(ageMs: number): Promise<void> {
    const { store, clock, logger, instanceId } = this.#options;
    const now = clock.now();
    const interrupted = await store.interruptOrphans({
      owner: instanceId,
      staleBefore: new Date(now.getTime() - ageMs).toISOString(),
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

/** The turn's tool catalog; two tools with one identity is the server's fault (a 500 that says which). */
function catalogFor(plan: PlannedTurn, request: TurnRequest, config: Config): ToolCatalog {
  try {
    return createTurnToolCatalog({ tools: plan.tools, toolSearchMode: resolveToolSearchMode({ model: request.model, configured: config.toolSearchMode }) });
  } catch (error) {
    if (error instanceof DuplicateToolError) throw new ServiceError({ statusCode: 500, code: 'tool_assembly_failed', message: error.message });
    throw error;
  }
}
