import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { openNativeHeap } from '../memory/native-heap.js';

/**
 * The service's Prometheus series, in one registry owned by the runtime (never prom-client's
 * global one, so tests and replicas in one process do not share counters). A feature adds its
 * series as one field here and one line in `createServiceMetrics`, and reaches it through the
 * turn services; `GET /metrics` serves `registry`.
 *
 * Labels are bounded sets only: tool names (fixed by the server's configuration, and
 * `unknown` for names the model made up), kinds, outcomes, rungs. Never agent ids or turn ids.
 */
export interface ServiceMetrics {
  readonly registry: Registry;
  /** Turns that ended, by kind, final status and outcome. */
  readonly turns: Counter<'kind' | 'status' | 'outcome'>;
  /** Turns running in this process now. */
  readonly turnsInFlight: Gauge<'kind'>;
  /** One model call (every attempt and retry wait included), by provider and outcome. */
  readonly modelCallDuration: Histogram<'provider' | 'outcome'>;
  /** One tool call, by tool and outcome (`completed` or the failure code). */
  readonly toolDuration: Histogram<'tool' | 'outcome'>;
  /** Tool calls whose arguments needed a repair rung (`none` is not counted). */
  readonly argumentRepairs: Counter<'rung'>;
  /** From the client going away to the turn's `turn.cancelled` being stored. */
  readonly disconnectToAbort: Histogram;
  /** Parked calls waiting for a decision, read from the store at scrape time (all replicas, restarts included). */
  readonly approvalsWaiting: Gauge;
  /** Turns waiting in an agent's queue (multitask enqueue), read from the store at scrape time. */
  readonly turnsQueued: Gauge;
  /** From a call being parked to its decision, by decision (`approve`, `deny`, `timeout`). */
  readonly approvalWait: Histogram<'decision'>;
  /** Workflow `agent()` tasks this process settled, by outcome (`succeeded`, `failed`, `cancelled`). */
  readonly workflowTasks: Counter<'outcome'>;
  /** Task turns started for workflow tasks (a task takes up to 3). */
  readonly workflowTaskAttempts: Counter;
  /** Webhook delivery attempts, by subject kind and outcome (`delivered`, `retrying`, `failed`, `refused`). */
  readonly webhookDeliveries: Counter<'subject' | 'outcome'>;
  /** Times the process's NativeHeapTrimmer gave malloc's free memory back (memory/native-heap-trimmer.ts). */
  readonly nativeHeapTrims: Counter;
  /** The RSS those trims gave back, in bytes. */
  readonly nativeHeapReleasedBytes: Counter;
  /** What glibc's malloc holds free now (`mallinfo2().fordblks`), read at scrape time; absent where malloc is not glibc's. */
  readonly nativeHeapFreeBytes: Gauge;
  /** MCP sessions this process holds now, by server (every agent's together), read at scrape time. */
  readonly mcpSessions: Gauge<'server'>;
}

/** Counts the store answers at scrape time (cheap indexed counts), for the gauges that must hold across replicas and restarts. */
export interface StoreCounts {
  readonly approvalsWaiting: () => Promise<number>;
  readonly turnsQueued: () => Promise<number>;
}

/** Counts this process keeps in memory, read at scrape time; a source not there yet counts nothing. */
export interface ProcessCounts {
  /** Open MCP sessions by server name. */
  readonly mcpSessions: () => ReadonlyMap<string, number>;
}

export function createServiceMetrics(options: { readonly processMetrics?: boolean; readonly counts: StoreCounts; readonly processCounts?: ProcessCounts }): ServiceMetrics {
  const registry = new Registry();
  const { counts } = options;
  const registers = [registry];
  const opened = openNativeHeap();
  const nativeHeap = 'unavailable' in opened ? undefined : opened;
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    turns: new Counter({ name: 'turn_runtime_turns_total', help: 'Turns that ended, by kind, status and outcome.', labelNames: ['kind', 'status', 'outcome'], registers }),
    turnsInFlight: new Gauge({ name: 'turn_runtime_turns_in_flight', help: 'Turns running in this process.', labelNames: ['kind'], registers }),
    modelCallDuration: new Histogram({
      name: 'turn_runtime_model_call_duration_seconds',
      help: 'Model calls (retries included), by provider and outcome.',
      labelNames: ['provider', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    toolDuration: new Histogram({
      name: 'turn_runtime_tool_duration_seconds',
      help: 'Tool calls, by tool and outcome (completed, or the failure code).',
      labelNames: ['tool', 'outcome'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120],
      registers,
    }),
    argumentRepairs: new Counter({ name: 'turn_runtime_argument_repairs_total', help: 'Tool calls whose arguments were repaired, by rung.', labelNames: ['rung'], registers }),
    disconnectToAbort: new Histogram({
      name: 'turn_runtime_disconnect_to_abort_seconds',
      help: 'From a streaming client going away to its turn ending as cancelled.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    approvalsWaiting: new Gauge({
      name: 'turn_runtime_approvals_waiting',
      help: 'Parked tool calls waiting for a decision (from the store, all replicas).',
      registers,
      async collect() {
        this.set(await counts.approvalsWaiting());
      },
    }),
    turnsQueued: new Gauge({
      name: 'turn_runtime_turns_queued',
      help: "Turns waiting in an agent's queue (from the store, all replicas).",
      registers,
      async collect() {
        this.set(await counts.turnsQueued());
      },
    }),
    approvalWait: new Histogram({
      name: 'turn_runtime_approval_wait_seconds',
      help: 'From a call being parked to its decision, by decision (approve, deny, timeout).',
      labelNames: ['decision'],
      buckets: [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 14_400, 86_400],
      registers,
    }),
    workflowTasks: new Counter({ name: 'turn_runtime_workflow_tasks_total', help: 'Workflow tasks settled, by outcome (succeeded, failed, cancelled).', labelNames: ['outcome'], registers }),
    workflowTaskAttempts: new Counter({ name: 'turn_runtime_workflow_task_attempts_total', help: 'Task turns started for workflow tasks.', registers }),
    nativeHeapTrims: new Counter({ name: 'turn_runtime_native_heap_trims_total', help: "Times the process gave the memory malloc held free back to the system (malloc_trim).", registers }),
    nativeHeapReleasedBytes: new Counter({ name: 'turn_runtime_native_heap_released_bytes_total', help: 'Resident memory those trims gave back, in bytes.', registers }),
    nativeHeapFreeBytes: new Gauge({
      name: 'turn_runtime_native_heap_free_bytes',
      help: "Memory glibc's malloc holds free now, over every arena (mallinfo2 fordblks); absent where malloc is not glibc's.",
      registers: nativeHeap === undefined ? [] : registers,
      collect() {
        if (nativeHeap !== undefined) this.set(nativeHeap.freeBytes());
      },
    }),
    mcpSessions: new Gauge({
      name: 'turn_runtime_mcp_sessions',
      help: 'MCP sessions this process holds open, by server (each belongs to one agent).',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const [server, open] of options.processCounts?.mcpSessions() ?? []) this.set({ server }, open);
      },
    }),
    webhookDeliveries: new Counter({
      name: 'turn_runtime_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by subject kind and outcome (delivered, retrying, failed, refused).',
      labelNames: ['subject', 'outcome'],
      registers,
    }),
  };
}
