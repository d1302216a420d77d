import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { DurableWork } from '../durable/durable-work.js';
import type { ServiceMetrics } from '../observability/service-metrics.js';
import type { TurnRun } from '../turns/turn-run.js';
import type { TurnService } from '../turns/turn-service.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import type { ScriptRunner } from './script/script-runner.js';
import type { WorkflowSettings } from './workflow-limits.js';
import type { WorkflowStore } from './workflow-store.js';

export { ADVANCE_QUEUE, TASK_QUEUE } from './workflow-queues.js';

/** What the engine's steps share: the parts, and this process's running task turns. */
export interface EngineContext {
  readonly store: WorkflowStore;
  readonly durable: DurableWork;
  readonly scripts: ScriptRunner;
  readonly webhooks: WebhookService;
  readonly settings: WorkflowSettings;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  /** Names this process in task rows, so its own dead tasks are told apart after a restart. */
  readonly instanceId: string;
  readonly turns: () => TurnService;
  /** Task turns running in this process, by `runId/seq`. */
  readonly running: Map<string, RunningTask>;
}

/** A task this process runs, and its current attempt's turn. */
export interface RunningTask {
  readonly runId: string;
  readonly seq: number;
  turn: TurnRun | undefined;
}

export const taskKey = (runId: string, seq: number): string => `${runId}/${seq}`;
export const taskId = (runId: string, seq: number): string => `${runId}.${seq}`;
