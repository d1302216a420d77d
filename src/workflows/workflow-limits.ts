import { TASK_RESULT_MAX_BYTES } from './task-turn/submit-result-tool.js';

/** The contract's limits: defaults a request may lower or raise up to the hard caps. */
export const WORKFLOW_LIMITS = {
  defaultConcurrency: 8,
  maxConcurrency: 32,
  defaultMaxAgentCalls: 256,
  maxAgentCalls: 1_024,
  maxRunningTasksPerAgent: 64,
  scriptBytes: 256 * 1024,
  argsBytes: 64 * 1024,
  taskValueBytes: TASK_RESULT_MAX_BYTES,
  resultBytes: 1024 * 1024,
  titleChars: 200,
  attempts: 3,
} as const;

/** What the operator sets (WORKFLOW_* variables). */
export interface WorkflowSettings {
  /** Calls of one agent holding a slot at once, across its runs (default 8, at most 64). */
  readonly runningTasksPerAgent: number;
  /** CPU time a script may use per replay step. */
  readonly scriptCpuMs: number;
  readonly scriptMemoryBytes: number;
  /** How long a task may go without its worker's heartbeat before another replica takes it over. */
  readonly taskLeaseSeconds: number;
  /** Task turns this replica runs at once. */
  readonly taskSlots: number;
}
