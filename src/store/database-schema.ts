import type { Generated } from 'kysely';

/** The tables of the turn store, as Kysely sees them. JSON is kept as text in both dialects. */
export interface Database {
  turns: TurnsTable;
  turn_events: TurnEventsTable;
  tool_sets: ToolSetsTable;
  turn_tools: TurnToolsTable;
  turn_provider_tools: TurnProviderToolsTable;
  todos: TodosTable;
  agent_queues: AgentQueuesTable;
  agent_leases: AgentLeasesTable;
  idempotency_keys: IdempotencyKeysTable;
  creation_keys: CreationKeysTable;
  turn_cancel_requests: TurnCancelRequestsTable;
  turn_webhooks: TurnWebhooksTable;
}

export interface TurnsTable {
  id: string;
  agent_id: string;
  kind: string;
  status: string;
  model: string;
  created_at: string;
  finished_at: string | null;
  iterations: number;
  output: string | null;
  result_json: string | null;
  error_json: string | null;
  outcome: string | null;
  input_tokens: number;
  output_tokens: number;
  owner: string;
  heartbeat_at: string;
  task_json: string | null;
  queued_at: string | null;
  queue_priority: number | null;
  queue_seq: number | null;
  background_job_id: string | null;
  schedule_id: string | null;
}

export interface TurnEventsTable {
  turn_id: string;
  seq: number;
  type: string;
  body: string;
}

export interface ToolSetsTable {
  /** SHA-256 of `json`, hex. */
  hash: string;
  json: string;
}

export interface TurnToolsTable {
  turn_id: string;
  tools_hash: string;
  /** The sources asked for that contributed nothing, as JSON `[{source, reason}]`. */
  unavailable_json: string;
}

export interface TurnProviderToolsTable {
  turn_id: string;
  iteration: number;
  tools_hash: string;
}

export interface TodosTable {
  agent_id: string;
  items_json: string;
  updated_at: string;
  revision: Generated<number>;
}

export interface AgentQueuesTable {
  agent_id: string;
  next_seq: number;
}

export interface AgentLeasesTable {
  agent_id: string;
  turn_id: string;
  owner: string;
  taken_at: string;
}

export interface IdempotencyKeysTable {
  /** SHA-256 of the bearer token, hex; `server` when auth is off. */
  scope: string;
  key: string;
  /** SHA-256 of the request body's canonical JSON, hex. */
  body_hash: string;
  turn_id: string;
  created_at: string;
}

/** An `Idempotency-Key` on `POST /workflows`, `/background-jobs` or `/schedules`, and what it made. */
export interface CreationKeysTable {
  /** As for turns: SHA-256 of the bearer token, hex; `server` when auth is off. */
  scope: string;
  /** `workflow` | `background_job` | `schedule`: each kind has its own keys. */
  kind: string;
  key: string;
  body_hash: string;
  resource_id: string;
  created_at: string;
}

export interface TurnCancelRequestsTable {
  turn_id: string;
  reason: string;
  requested_at: string;
}

/**
 * A turn's webhook, stored with the turn when it is admitted: the outbox row that, once the turn
 * has ended (however: completed, failed, cancelled, or interrupted by another replica), is moved
 * to the durable delivery queue exactly once (`enqueued_at` set in the same transaction).
 */
export interface TurnWebhooksTable {
  turn_id: string;
  url: string;
  created_at: string;
  enqueued_at: string | null;
}
