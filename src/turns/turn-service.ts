import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type OpenAI from 'openai';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { createTextCompletionPolicy, type CompletionPolicy } from '../loop/completion-policy.js';
import { runTurnLoop, type LoopOutcome } from '../loop/run-turn-loop.js';
import type { ToolCatalog } from '../loop/tool-catalog.js';
import { DuplicateToolError } from '../loop/tool-map.js';
import type { JsonObject } from '../json.js';
import type { ConversationItem, ModelClient } from '../models/model-client.js';
import { ServiceError, turnNotFound } from '../service-error.js';
import type { StoredEvent, StoredTask, TurnRecord, TurnStore, TurnToolsRecord } from '../store/turn-store.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { assembleTextTurnTools } from './assembly/assemble-text-turn-tools.js';
import type { ToolServices, UnavailableSource } from './assembly/tool-services.js';
import { createModelClient } from './create-model-client.js';
import { createTurnToolCatalog, resolveToolSearchMode } from './create-turn-tool-catalog.js';
import { toToolSnapshot } from './provider-tools.js';
import { TERMINAL_EVENT_TYPES, type TurnEventBody } from './turn-events.js';
import { resolveTurnOutcome } from './turn-outcome.js';
import type { TurnRequest } from './turn-request.js';
import { TurnRun } from './turn-run.js';
import { prepareWorkflowTask } from './workflow-task/prepare-workflow-task.js';

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
}

const HEARTBEAT_MS = 15_000;
const ORPHAN_AFTER_MS = 60_000;
const EVENT_PAGE = 500;
const REMOTE_POLL_MS = 500;
/** How long assembly may wait on tool sources (MCP servers listing their tools …). */
const ASSEMBLY_TIMEOUT_MS = 10_000;
/** How long a cancelled loop may take to unwind before the turn is closed without it. */
const UNWIND_GRACE_MS = 1_000;

/** Everything the loop needs for one turn, decided before the turn exists. */
interface PlannedTurn {
  readonly model: ModelClient;
  readonly tools: readonly WorkerAgentTool[];
  readonly unavailable: readonly UnavailableSource[];
  readonly instructions: string | undefined;
  readonly completion: CompletionPolicy;
  readonly task?: StoredTask;
}

/**
 * Runs turns: validates and plans them, creates their records, drives the loop in the
 * background, and ends each with exactly one stored terminal event. Also the place that
 * knows which turns run in this process, for streaming, cancellation and shutdown.
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
    const heartbeat = setInterval(() => {
      void options.store.heartbeat([...service.#runs.keys()], options.clock.now().toISOString()).catch((error: unknown) => {
        options.logger.warn({ err: error }, 'turn heartbeat failed');
      });
    }, HEARTBEAT_MS);
    heartbeat.unref();
    service.#timers.push(heartbeat);
    if (options.sharedStore) {
      const sweep = setInterval(() => {
        void service.#sweepOrphans(ORPHAN_AFTER_MS).catch((error: unknown) => {
          options.logger.warn({ err: error }, 'orphan sweep failed');
        });
      }, ORPHAN_AFTER_MS / 2);
      sweep.unref();
      service.#timers.push(sweep);
    }
    return service;
  }

  get draining(): boolean {
    return this.#draining;
  }

  get runningCount(): number {
    return this.#runs.size;
  }

  /** Validates, plans and starts a turn. Resolves once its record and `turn.started` exist. */
  async startTurn(request: TurnRequest): Promise<TurnRun> {
    const { config, store, clock, logger } = this.#options;
    if (this.#draining) throw new ServiceError({ statusCode: 503, code: 'shutting_down', message: 'the server is shutting down' });
    if (this.#runs.size >= config.http.maxConcurrentTurns) {
      throw new ServiceError({ statusCode: 503, code: 'overloaded', message: 'too many turns are running; try again shortly' });
    }
    const turnId = this.#options.newTurnId();
    const turnLogger = logger.child({ turnId, agentId: request.agent.id });
    const home = path.join(config.dataDir, 'agents', request.agent.id, 'home');
    const plan = await this.#plan(request, home, turnId, turnLogger);
    let catalog: ToolCatalog;
    try {
      catalog = createTurnToolCatalog({ tools: plan.tools, toolSearchMode: resolveToolSearchMode({ model: request.model, configured: config.toolSearchMode }) });
    } catch (error) {
      if (error instanceof DuplicateToolError) {
        throw new ServiceError({ statusCode: 500, code: 'tool_assembly_failed', message: error.message });
      }
      throw error;
    }
    const record: TurnRecord = {
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
    };
    await mkdir(home, { recursive: true, mode: 0o700 });
    await store.createTurn({
      record,
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
    const maxIterations = Math.min(limits.maxIterations ?? config.limits.defaultMaxIterations, config.limits.maxIterations);
    const timeoutMs = Math.min(limits.timeoutMs ?? config.limits.defaultTimeoutMs, config.limits.maxTimeoutMs);
    void this.#drive({ run, plan, catalog, input: toConversation(request.input), maxIterations, timeoutMs, logger: turnLogger });
    return run;
  }

  async #plan(request: TurnRequest, home: string, turnId: string, logger: Logger): Promise<PlannedTurn> {
    const { config, services, store } = this.#options;
    const model = createModelClient({ request: request.model, config: config.model, client: this.#options.openAIClient, logger });
    if (request.kind === 'workflow_task' && request.task !== undefined) {
      const task: StoredTask = { instructions: request.task.instructions, resultSchema: request.task.resultSchema as JsonObject };
      const prepared = prepareWorkflowTask({
        agent: request.agent,
        home,
        task,
        services,
        loadStoredSchema: async () => {
          const stored = await store.getTask(turnId);
          if (stored === undefined) throw new Error('the task schema of this turn could not be loaded; try again');
          return stored.resultSchema;
        },
      });
      return { model, ...prepared, task };
    }
    const assembled = await assembleTextTurnTools({ agent: request.agent, home, services, signal: AbortSignal.timeout(ASSEMBLY_TIMEOUT_MS), logger });
    return {
      model,
      tools: assembled.tools,
      unavailable: assembled.unavailable,
      instructions: request.agent.instructions,
      completion: createTextCompletionPolicy(),
    };
  }

  async #drive(options: {
    run: TurnRun;
    plan: PlannedTurn;
    catalog: ToolCatalog;
    input: ConversationItem[];
    maxIterations: number;
    timeoutMs: number;
    logger: Logger;
  }): Promise<void> {
    const { run, plan, logger } = options;
    const { config, clock } = this.#options;
    const timeout = setTimeout(() => {
      run.cancel('timeout');
    }, options.timeoutMs);
    timeout.unref();
    let terminal: ReturnType<typeof resolveTurnOutcome>;
    try {
      const progress = { iterations: 0, usage: { inputTokens: 0, outputTokens: 0 } };
      const loop = runTurnLoop({
        progress,
        model: plan.model,
        ...(plan.instructions === undefined ? {} : { instructions: plan.instructions }),
        input: options.input,
        catalog: options.catalog,
        onProviderToolsChanged: (iteration, list) => {
          void this.#options.store.recordProviderTools(run.id, iteration, list.json).catch((error: unknown) => {
            logger.error({ err: error }, 'could not store a changed provider tool list');
          });
        },
        completion: plan.completion,
        maxIterations: options.maxIterations,
        toolTimeoutMs: config.limits.toolTimeoutMs,
        parallelLimit: config.limits.parallelToolLimit,
        signal: run.signal,
        emit: (event: TurnEventBody) => {
          run.emit(event);
        },
        logger,
        clock,
      });
      const outcome = await Promise.race([loop, unwound(run.signal, loop, progress)]);
      terminal = resolveTurnOutcome({ outcome, kind: run.kind, maxIterations: options.maxIterations, cancelReason: run.cancelReason });
    } catch (error) {
      logger.error({ err: error }, 'turn failed with an internal error');
      const failure = { code: 'internal_error', message: 'the turn stopped because of an internal error' };
      const usage = { inputTokens: 0, outputTokens: 0 };
      terminal = {
        event: { type: 'turn.failed', error: failure, iterations: 0, usage },
        finish: { status: 'failed', iterations: 0, usage, output: null, error: failure, outcome: 'internal_error' },
      };
    }
    clearTimeout(timeout);
    await run.finish(terminal.event, terminal.finish);
    this.#runs.delete(run.id);
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
      if (record.status !== 'running') {
        throw new ServiceError({ statusCode: 409, code: 'turn_not_running', message: `turn "${turnId}" has already ended (${record.status})` });
      }
      throw new ServiceError({ statusCode: 409, code: 'turn_not_running', message: `turn "${turnId}" is not running in this server process` });
    }
    run.cancel('cancel_requested');
    await run.done;
    return this.getTurn(turnId);
  }

  /** The running turn in this process, if it is here (for streaming a POST's own answer). */
  localRun(turnId: string): TurnRun | undefined {
    return this.#runs.get(turnId);
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
      if (follow) await Promise.race([run.done, aborted(signal)]);
      unsubscribe();
      return;
    }
    await this.getTurn(turnId);
    let afterSeq = options.afterSeq;
    for (;;) {
      const page = await this.#options.store.listEvents(turnId, { afterSeq, limit: EVENT_PAGE });
      for (const event of page) {
        onEvent(event);
        afterSeq = event.seq;
        if (TERMINAL_EVENT_TYPES.has(event.type)) return;
      }
      if (page.length === EVENT_PAGE) continue;
      if (!follow || signal.aborted) return;
      if (this.#runs.has(turnId)) {
        await this.streamEvents({ ...options, afterSeq });
        return;
      }
      await delay(REMOTE_POLL_MS, signal);
    }
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
    const graceMs = this.#options.config.http.shutdownGraceMs;
    await Promise.race([Promise.all(runs.map((run) => run.done)), delay(graceMs)]);
    for (const run of this.#runs.values()) run.cancel('shutdown');
    await Promise.all([...this.#runs.values()].map((run) => run.done));
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
}

function toConversation(input: TurnRequest['input']): ConversationItem[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return input.map((item): ConversationItem => {
    if (item.type === 'function_call') {
      return { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments, ...(item.namespace === undefined ? {} : { namespace: item.namespace }) };
    }
    if (item.type === 'function_call_output') return { type: 'function_call_output', call_id: item.call_id, output: item.output };
    return { type: 'message', role: item.role, content: item.content };
  });
}

/**
 * After cancellation, gives the loop a moment to unwind, then settles as cancelled without
 * it: a model client or tool that ignores its signal cannot keep a cancelled turn open.
 */
async function unwound(signal: AbortSignal, loop: Promise<LoopOutcome>, progress: LoopProgress): Promise<LoopOutcome> {
  await aborted(signal);
  return Promise.race([loop, delay(UNWIND_GRACE_MS).then((): LoopOutcome => ({ kind: 'cancelled', iterations: progress.iterations, usage: { ...progress.usage } }))]);
}

interface LoopProgress {
  iterations: number;
  usage: { inputTokens: number; outputTokens: number };
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => {
      resolve();
    }, { once: true });
  });
}

function delay(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, milliseconds);
    timer.unref();
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
