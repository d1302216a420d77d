/** The workflow tables (see the store's migrations). JSON is kept as text. */
export type WorkflowTables = {
  workflow_runs: WorkflowRunRow;
  workflow_tasks: WorkflowTaskRow;
  workflow_events: { run_id: string; seq: number; type: string; body: string };
};

export type WorkflowRunStatus = 'running' | 'completed' | 'failed' | 'cancelled';

export interface WorkflowRunRow {
  id: string;
  agent_id: string;
  title: string;
  status: string;
  script: string;
  args_json: string;
  /** The task turns' agent: `{id, instructions?, tools: {web?, brain?}}`. */
  agent_json: string;
  /** The task turns' model request (`{name}`, or the scripted model's steps). */
  model_json: string;
  concurrency: number;
  max_agent_calls: number;
  webhook_url: string | null;
  source_turn_id: string | null;
  source_call_id: string | null;
  seed: number;
  created_at: string;
  finished_at: string | null;
  result_json: string | null;
  error_json: string | null;
  cancel_requested: number;
  /** Rounds of results fed to the script so far. */
  round: number;
  /** Bumped by every engine step: two steps of one run never both commit. */
  version: number;
  /** The last event seq handed out. */
  event_seq: number;
}

/** `queued` (waiting for a slot) → `dispatched` (job sent) → `running` → `succeeded` | `failed` | `cancelled`. */
export type WorkflowTaskState = 'queued' | 'dispatched' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface WorkflowTaskRow {
  run_id: string;
  seq: number;
  agent_id: string;
  prompt: string;
  label: string | null;
  schema_json: string | null;
  state: string;
  /** Attempts that ended (a task turn that completed, failed or timed out). */
  attempts: number;
  value_json: string | null;
  error: string | null;
  /** The round its result was first fed to the script in; null until then. */
  round: number | null;
  turn_ids_json: string;
  owner: string | null;
  job_id: string | null;
  /** Bumped by every claim, so two workers never both take the task. */
  claims: number;
  heartbeat_at: string | null;
  created_at: string;
  finished_at: string | null;
}

export const TERMINAL_TASK_STATES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);
