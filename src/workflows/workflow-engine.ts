import { randomInt, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { pause } from '../concurrency/wait.js';
import { crashPoint } from '../durable/crash-points.js';
import type { Creation, CreationKey } from '../durable/creation-keys.js';
import type { DurableWork } from '../durable/durable-work.js';
import type { ServiceMetrics } from '../observability/service-metrics.js';
import { ServiceError } from '../service-error.js';
import type { TurnService } from '../turns/turn-service.js';
import { checkWebhookUrl } from '../webhooks/check-webhook-url.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { advanceRun } from './advance-run.js';
import { ADVANCE_QUEUE, TASK_QUEUE, type EngineContext } from './engine-context.js';
import { runTask } from './run-task.js';
import type { ScriptRunner } from './script/script-runner.js';
import { showWebhookAttempt } from './show-webhook-attempt.js';
import { toWorkflowRecord } from './to-workflow-record.js';
import { TERMINAL_WORKFLOW_EVENTS, type StoredWorkflowEvent } from './workflow-events.js';
import { WORKFLOW_LIMITS, type WorkflowSettings } from './workflow-limits.js';
import type { WorkflowModel } from './workflow-model.js';
import type { WorkflowRecord, WorkflowRequest } from './workflow-request.js';
import type { WorkflowStore } from './workflow-store.js';

/** How often running task turns here check for a cancel of their run (from any replica). */
const CANCEL_POLL_MS = 500;
const EVENT_POLL_MS = 200;

/** A run as the engine is asked to start it: the HTTP request, or the `workflow` tool's call. */
export type StartWorkflow = Omit<WorkflowRequest, 'model'> & {
  readonly model: WorkflowModel;
  /** The main turn and tool call that started it (a retried call gets the same run). */
  readonly source?: { readonly turnId: string; readonly callId: string };
};

export interface WorkflowEngineOptions {
  readonly store: WorkflowStore;
  readonly durable: DurableWork;
  readonly scripts: ScriptRunner;
  readonly webhooks: WebhookService;
  readonly settings: WorkflowSettings;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly instanceId: string;
  readonly metrics: ServiceMetrics;
  /** Whether `{name}` models can run (a provider is configured). */
  readonly hasModelProvider: boolean;
}

/**
 * Workflow runs: started from HTTP or a main turn's tool, stepped and their tasks run on
 * durable work (any replica), read, listed, cancelled and followed from any replica.
 */
export class WorkflowEngine {
  readonly #context: EngineContext;
  readonly #hasModelProvider: boolean;
  #turns: TurnService | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastHeartbeat = 0;

  constructor(options: WorkflowEngineOptions) {
    this.#hasModelProvider = options.hasModelProvider;
    this.#context = {
      store: options.store,
      durable: options.durable,
      scripts: options.scripts,
      webhooks: options.webhooks,
      settings: options.settings,
      clock: options.clock,
      logger: options.logger,
      instanceId: options.instanceId,
      metrics: options.metrics,
      running: new Map(),
      turns: () => {
        if (this.#turns === undefined) throw new Error('the workflow engine has no turn service yet');
        return this.#turns;
      },
    };
    options.webhooks.setRecorder('workflow', (runId, attempt) => showWebhookAttempt(options.store, runId, attempt));
  }

  /** Starts taking work: task turns run through `turns` (the service is built after the engine, whose tools it offers). */
  async start(turns: TurnService): Promise<void> {
    this.#turns = turns;
    const { durable, settings } = this.#context;
    await durable.defineQueue({ name: ADVANCE_QUEUE, policy: 'stately', retryLimit: 50, retryDelaySeconds: 1, backoff: true });
    await durable.defineQueue({ name: TASK_QUEUE, policy: 'standard', retryLimit: 100_000, retryDelaySeconds: 2, backoff: false });
    await durable.work({ queue: ADVANCE_QUEUE, concurrency: 4, handler: (job) => advanceRun(this.#context, job.payload['runId'] as string) });
    await durable.work({ queue: TASK_QUEUE, concurrency: settings.taskSlots, handler: (job) => runTask(this.#context, job) });
    this.#timer = setInterval(() => {
      this.#watchRunningTasks().catch((error: unknown) => {
        this.#context.logger.warn({ err: error }, 'could not check running workflow tasks');
      });
    }, CANCEL_POLL_MS);
    this.#timer.unref();
  }

  /**
   * Stores a run and asks for its first step. A second start for the same tool call, or with
   * the `Idempotency-Key` (`key`) of an earlier one, answers that run (`replayed`).
   */
  async startRun(request: StartWorkflow, key?: CreationKey): Promise<Creation<WorkflowRecord>> {
    const { store, webhooks, clock } = this.#context;
    if (request.webhook !== undefined) checkWebhookUrl({ url: request.webhook.url, allowHosts: webhooks.allowHosts, secretConfigured: webhooks.configured, path: ['webhook', 'url'] });
    if (!('script' in request.model) && !('tasks' in request.model) && !this.#hasModelProvider) {
      throw new ServiceError({ statusCode: 400, code: 'model_not_configured', message: 'this server has no model provider configured; use "model": {"script": […]} or {"tasks": {…}} for the scripted model' });
    }
    const id = `wf_${randomUUID().replaceAll('-', '')}`;
    const concurrency = request.concurrency ?? WORKFLOW_LIMITS.defaultConcurrency;
    const maxAgentCalls = request.maxAgentCalls ?? WORKFLOW_LIMITS.defaultMaxAgentCalls;
    const tools = request.agent.tools;
    const agent = {
      id: request.agent.id,
      ...(request.agent.instructions === undefined ? {} : { instructions: request.agent.instructions }),
      tools: { ...(tools?.web === true ? { web: true } : {}), ...(tools?.brain === true ? { brain: true } : {}) },
    };
    const created = await store.createRun(
      {
        id,
        agent_id: request.agent.id,
        title: request.title,
        status: 'running',
        script: request.script,
        args_json: JSON.stringify(request.args ?? {}),
        agent_json: JSON.stringify(agent),
        model_json: JSON.stringify(request.model),
        concurrency,
        max_agent_calls: maxAgentCalls,
        webhook_url: request.webhook?.url ?? null,
        source_turn_id: request.source?.turnId ?? null,
        source_call_id: request.source?.callId ?? null,
        seed: randomInt(0, 2 ** 31),
        created_at: clock.now().toISOString(),
        finished_at: null,
        result_json: null,
        error_json: null,
        cancel_requested: 0,
        round: 0,
        version: 0,
        event_seq: 0,
      },
      { type: 'workflow.started', agentId: request.agent.id, title: request.title, concurrency, maxAgentCalls },
      key,
    );
    // Its first step's job was stored with it.
    if (created.created) crashPoint('workflow.created');
    return { record: await this.getRun(created.id), replayed: !created.created };
  }

  async getRun(id: string): Promise<WorkflowRecord> {
    const [run] = await this.#context.store.readRuns({ id, limit: 1 });
    if (run === undefined) throw workflowNotFound(id);
    return toWorkflowRecord(run);
  }

  /** Newest first; one store statement for the whole page. */
  async listRuns(options: { readonly agentId?: string | undefined; readonly status?: string | undefined; readonly limit: number }): Promise<WorkflowRecord[]> {
    return (await this.#context.store.readRuns(options)).map(toWorkflowRecord);
  }

  /**
   * Cancels a running run: no new task starts, running task turns are aborted (here at once,
   * on other replicas within a poll), late results are ignored, and the run ends `cancelled`
   * once its running tasks have stopped. With `idempotent`, cancelling an ended run answers its record.
   */
  async cancelRun(id: string, options: { readonly idempotent: boolean }): Promise<WorkflowRecord> {
    const { store } = this.#context;
    const run = await store.getRun(id);
    if (run === undefined) throw workflowNotFound(id);
    const requested = await store.requestCancel(id);
    if (!requested && !options.idempotent) {
      throw new ServiceError({ statusCode: 409, code: 'workflow_not_running', message: `workflow "${id}" ${run.status === 'running' ? 'is already being cancelled' : `has already ended (${run.status})`}` });
    }
    // The cancel was stored with the job that steps the run.
    if (requested) this.#abortLocalTasks([id]);
    return this.getRun(id);
  }

  /** Delivers a run's events after `afterSeq`; with `follow`, keeps polling the store until the terminal event or `signal`. */
  async streamEvents(options: { readonly runId: string; readonly afterSeq: number; readonly follow: boolean; readonly signal: AbortSignal; readonly onEvent: (event: StoredWorkflowEvent) => void }): Promise<void> {
    const { store } = this.#context;
    let after = options.afterSeq;
    for (;;) {
      const events = await store.listEvents(options.runId, { afterSeq: after, limit: 500 });
      for (const event of events) {
        options.onEvent(event);
        after = event.seq;
        if (TERMINAL_WORKFLOW_EVENTS.has(event.type) && options.follow) return;
      }
      if (events.length === 500) continue;
      if (!options.follow || options.signal.aborted) return;
      const run = await store.getRun(options.runId);
      if (run === undefined || run.status !== 'running') {
        if ((await store.listEvents(options.runId, { afterSeq: after, limit: 1 })).length === 0) return;
        continue;
      }
      await pause(EVENT_POLL_MS, options.signal);
    }
  }

  /** The seq of a run's terminal event, when it has one, and its last event's. */
  async eventBounds(runId: string): Promise<{ terminalSeq: number | undefined; lastSeq: number }> {
    const run = await this.#context.store.getRun(runId);
    if (run === undefined) throw workflowNotFound(runId);
    const terminalSeq = run.status === 'running' ? undefined : await this.#context.store.terminalEventSeq(runId);
    return { terminalSeq, lastSeq: run.event_seq };
  }

  /** Forgets runs that ended before `before`, in bounded batches (see WorkflowStore.pruneFinished). */
  pruneFinished(options: { readonly before: string; readonly limit: number }): Promise<number> {
    return this.#context.store.pruneFinished(options);
  }

  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#context.scripts.close();
  }

  async #watchRunningTasks(): Promise<void> {
    const { running, store, settings, instanceId, clock } = this.#context;
    if (running.size === 0) return;
    const entries = [...running.values()];
    this.#abortLocalTasks(await store.runsToStop([...new Set(entries.map((entry) => entry.runId))]));
    const now = clock.monotonicMs();
    if (now - this.#lastHeartbeat >= (settings.taskLeaseSeconds * 1000) / 4) {
      this.#lastHeartbeat = now;
      await store.heartbeat(instanceId, entries);
    }
  }

  #abortLocalTasks(runIds: readonly string[]): void {
    const stopping = new Set(runIds);
    for (const entry of this.#context.running.values()) if (stopping.has(entry.runId)) entry.turn?.cancel('cancel_requested');
  }
}

export const workflowNotFound = (id: string) => new ServiceError({ statusCode: 404, code: 'workflow_not_found', message: `no workflow with id "${id.slice(0, 200)}"` });

