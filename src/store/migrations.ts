import { sql, type Kysely, type Migration } from 'kysely';
import { brainPagesMigration } from '../brain/brain-pages-migration.js';
import { coordinationMigration } from './coordination-migration.js';

/**
 * The store's migrations, in order. Written once for SQLite and PostgreSQL alike: text for
 * JSON and timestamps (ISO 8601 sorts as text), integers for counters.
 */
export const migrations: Record<string, Migration> = {
  '2026-11-30-001-turns': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('turns')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('agent_id', 'text', (column) => column.notNull())
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('model', 'text', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('finished_at', 'text')
        .addColumn('iterations', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('output', 'text')
        .addColumn('result_json', 'text')
        .addColumn('error_json', 'text')
        .addColumn('outcome', 'text')
        .addColumn('input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('output_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('owner', 'text', (column) => column.notNull())
        .addColumn('heartbeat_at', 'text', (column) => column.notNull())
        .addColumn('task_json', 'text')
        .execute();
      await db.schema.createIndex('turns_status_heartbeat').on('turns').columns(['status', 'heartbeat_at']).execute();
      await db.schema.createIndex('turns_agent_created').on('turns').columns(['agent_id', 'created_at']).execute();

      await db.schema
        .createTable('turn_events')
        .addColumn('turn_id', 'text', (column) => column.notNull().references('turns.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('body', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('turn_events_pk', ['turn_id', 'seq'])
        .execute();

      // What turns were given, kept once per distinct JSON text: consecutive turns of an agent
      // usually get byte-identical tool lists, and with a large deferred catalog one list can
      // be a megabyte.
      await db.schema
        .createTable('tool_sets')
        .addColumn('hash', 'text', (column) => column.primaryKey())
        .addColumn('json', 'text', (column) => column.notNull())
        .execute();

      await db.schema
        .createTable('turn_tools')
        .addColumn('turn_id', 'text', (column) => column.primaryKey().references('turns.id').onDelete('cascade'))
        .addColumn('tools_hash', 'text', (column) => column.notNull().references('tool_sets.hash'))
        .addColumn('unavailable_json', 'text', (column) => column.notNull().defaultTo('[]'))
        .execute();

      await db.schema
        .createTable('turn_provider_tools')
        .addColumn('turn_id', 'text', (column) => column.notNull().references('turns.id').onDelete('cascade'))
        .addColumn('iteration', 'integer', (column) => column.notNull())
        .addColumn('tools_hash', 'text', (column) => column.notNull().references('tool_sets.hash'))
        .addPrimaryKeyConstraint('turn_provider_tools_pk', ['turn_id', 'iteration'])
        .execute();

      await db.schema
        .createTable('todos')
        .addColumn('agent_id', 'text', (column) => column.primaryKey())
        .addColumn('items_json', 'text', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .addColumn('revision', 'integer', (column) => column.notNull().defaultTo(sql`0`))
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const table of ['todos', 'turn_provider_tools', 'turn_tools', 'tool_sets', 'turn_events', 'turns']) {
        await db.schema.dropTable(table).ifExists().execute();
      }
    },
  },
  '2026-12-01-brain-001-pages': brainPagesMigration,
  '2026-12-01-replicas-001-coordination': coordinationMigration,
  '2026-12-01-approvals-001-parked-turns': {
    async up(db: Kysely<unknown>) {
      // One row per call that waited for a person: the exact call (its validated arguments and
      // their hash) and, once given, the decision. A turn parks as often as it needs to.
      await db.schema
        .createTable('turn_approvals')
        .addColumn('turn_id', 'text', (column) => column.notNull().references('turns.id').onDelete('cascade'))
        .addColumn('call_id', 'text', (column) => column.notNull())
        .addColumn('position', 'integer', (column) => column.notNull())
        .addColumn('iteration', 'integer', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('namespace', 'text')
        .addColumn('arguments_json', 'text', (column) => column.notNull())
        .addColumn('arguments_hash', 'text', (column) => column.notNull())
        .addColumn('label', 'text', (column) => column.notNull())
        .addColumn('requested_at', 'text', (column) => column.notNull())
        .addColumn('expires_at', 'text', (column) => column.notNull())
        .addColumn('decision', 'text')
        .addColumn('message', 'text')
        .addColumn('reason', 'text')
        .addColumn('decided_at', 'text')
        .addPrimaryKeyConstraint('turn_approvals_pk', ['turn_id', 'call_id'])
        .execute();
      await db.schema.createIndex('turn_approvals_expires').on('turn_approvals').columns(['decision', 'expires_at']).execute();
      // What a parked turn needs to go on, from any process: its conversation and parked batch.
      await db.schema
        .createTable('turn_continuations')
        .addColumn('turn_id', 'text', (column) => column.primaryKey().references('turns.id').onDelete('cascade'))
        .addColumn('body', 'text', (column) => column.notNull())
        .addColumn('parked_at', 'text', (column) => column.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('turn_continuations').ifExists().execute();
      await db.schema.dropTable('turn_approvals').ifExists().execute();
    },
  },
  // Durable work on SQLite (on PostgreSQL pg-boss keeps its own tables; this one stays empty there).
  '2026-12-01-workflows-001-durable-jobs': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('durable_jobs')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('queue', 'text', (column) => column.notNull())
        .addColumn('payload_json', 'text', (column) => column.notNull())
        .addColumn('state', 'text', (column) => column.notNull())
        .addColumn('singleton_key', 'text')
        .addColumn('run_at', 'text', (column) => column.notNull())
        .addColumn('attempt', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('locked_by', 'text')
        .addColumn('lease_until', 'text')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema.createIndex('durable_jobs_claim').on('durable_jobs').columns(['queue', 'state', 'run_at']).execute();
      await db.schema.createIndex('durable_jobs_singleton').on('durable_jobs').columns(['queue', 'singleton_key', 'state']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('durable_jobs').ifExists().execute();
    },
  },
  '2026-12-01-workflows-002-webhook-attempts': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('webhook_id', 'text', (column) => column.notNull())
        .addColumn('attempt', 'integer', (column) => column.notNull())
        .addColumn('subject_kind', 'text', (column) => column.notNull())
        .addColumn('subject_id', 'text', (column) => column.notNull())
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('url', 'text', (column) => column.notNull())
        .addColumn('at', 'text', (column) => column.notNull())
        .addColumn('outcome', 'text', (column) => column.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addPrimaryKeyConstraint('webhook_attempts_pk', ['webhook_id', 'attempt'])
        .execute();
      await db.schema.createIndex('webhook_attempts_subject').on('webhook_attempts').columns(['subject_kind', 'subject_id']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('webhook_attempts').ifExists().execute();
    },
  },
  '2026-12-01-workflows-003-workflows': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('workflow_runs')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('agent_id', 'text', (column) => column.notNull())
        .addColumn('title', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('script', 'text', (column) => column.notNull())
        .addColumn('args_json', 'text', (column) => column.notNull())
        .addColumn('agent_json', 'text', (column) => column.notNull())
        .addColumn('model_json', 'text', (column) => column.notNull())
        .addColumn('concurrency', 'integer', (column) => column.notNull())
        .addColumn('max_agent_calls', 'integer', (column) => column.notNull())
        .addColumn('webhook_url', 'text')
        .addColumn('source_turn_id', 'text')
        .addColumn('source_call_id', 'text')
        .addColumn('seed', 'integer', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('finished_at', 'text')
        .addColumn('result_json', 'text')
        .addColumn('error_json', 'text')
        .addColumn('cancel_requested', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('round', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('version', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('event_seq', 'integer', (column) => column.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('workflow_runs_agent_created').on('workflow_runs').columns(['agent_id', 'created_at']).execute();
      // A retried turn with the same tool call id gets the same run.
      await db.schema.createIndex('workflow_runs_source_call').on('workflow_runs').columns(['agent_id', 'source_call_id']).unique().execute();

      await db.schema
        .createTable('workflow_tasks')
        .addColumn('run_id', 'text', (column) => column.notNull().references('workflow_runs.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('agent_id', 'text', (column) => column.notNull())
        .addColumn('prompt', 'text', (column) => column.notNull())
        .addColumn('label', 'text')
        .addColumn('schema_json', 'text')
        .addColumn('state', 'text', (column) => column.notNull())
        .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('value_json', 'text')
        .addColumn('error', 'text')
        .addColumn('round', 'integer')
        .addColumn('turn_ids_json', 'text', (column) => column.notNull().defaultTo('[]'))
        .addColumn('owner', 'text')
        .addColumn('job_id', 'text')
        .addColumn('claims', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('heartbeat_at', 'text')
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('finished_at', 'text')
        .addPrimaryKeyConstraint('workflow_tasks_pk', ['run_id', 'seq'])
        .execute();
      await db.schema.createIndex('workflow_tasks_agent_state').on('workflow_tasks').columns(['agent_id', 'state']).execute();

      await db.schema
        .createTable('workflow_events')
        .addColumn('run_id', 'text', (column) => column.notNull().references('workflow_runs.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('body', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('workflow_events_pk', ['run_id', 'seq'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const table of ['workflow_events', 'workflow_tasks', 'workflow_runs']) await db.schema.dropTable(table).ifExists().execute();
    },
  },
  '2026-12-01-observe-001-turns-created': {
    // The inspector lists recent turns of every agent, newest first.
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('turns_created').on('turns').columns(['created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('turns_created').ifExists().execute();
    },
  },
  // Background agent jobs: the job, its turns, the messages queued to it, its events; and the turn's origin.
  '2026-12-01-jobs-001-background-jobs': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('turns').addColumn('background_job_id', 'text').execute();
      await db.schema.alterTable('turns').addColumn('schedule_id', 'text').execute();
      await db.schema
        .createTable('background_jobs')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('agent_id', 'text', (column) => column.notNull())
        .addColumn('title', 'text', (column) => column.notNull())
        .addColumn('instructions', 'text', (column) => column.notNull())
        .addColumn('request_json', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('output', 'text')
        .addColumn('error_json', 'text')
        .addColumn('message_count', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('owner', 'text')
        .addColumn('heartbeat_at', 'text')
        .addColumn('source_turn_id', 'text')
        .addColumn('source_call_id', 'text')
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema.createIndex('background_jobs_agent').on('background_jobs').columns(['agent_id', 'created_at']).execute();
      await db.schema.createIndex('background_jobs_status').on('background_jobs').columns(['status']).execute();
      await db.schema
        .createTable('background_job_turns')
        .addColumn('job_id', 'text', (column) => column.notNull().references('background_jobs.id').onDelete('cascade'))
        .addColumn('turn_index', 'integer', (column) => column.notNull())
        .addColumn('turn_id', 'text', (column) => column.notNull())
        .addColumn('outcome', 'text')
        .addColumn('output', 'text')
        .addPrimaryKeyConstraint('background_job_turns_pk', ['job_id', 'turn_index'])
        .execute();
      await db.schema
        .createTable('background_job_messages')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('job_id', 'text', (column) => column.notNull().references('background_jobs.id').onDelete('cascade'))
        .addColumn('text', 'text', (column) => column.notNull())
        .addColumn('turn_index', 'integer')
        .addColumn('created_at', 'text', (column) => column.notNull())
        .execute();
      await db.schema.createIndex('background_job_messages_job').on('background_job_messages').columns(['job_id', 'turn_index']).execute();
      await db.schema
        .createTable('background_job_events')
        .addColumn('job_id', 'text', (column) => column.notNull().references('background_jobs.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('body', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('background_job_events_pk', ['job_id', 'seq'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const table of ['background_job_events', 'background_job_messages', 'background_job_turns', 'background_jobs']) {
        await db.schema.dropTable(table).ifExists().execute();
      }
      await db.schema.alterTable('turns').dropColumn('schedule_id').execute();
      await db.schema.alterTable('turns').dropColumn('background_job_id').execute();
    },
  },
  // Schedules: one-off and cron fires of a stored prompt, and the fires that happened.
  '2026-12-01-jobs-002-schedules': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('schedules')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('agent_id', 'text', (column) => column.notNull())
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('at', 'text')
        .addColumn('cron', 'text')
        .addColumn('time_zone', 'text', (column) => column.notNull())
        .addColumn('prompt', 'text', (column) => column.notNull())
        .addColumn('request_json', 'text', (column) => column.notNull())
        .addColumn('overlap', 'text', (column) => column.notNull())
        .addColumn('missed', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('next_fire_at', 'text')
        .addColumn('generation', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('source_turn_id', 'text')
        .addColumn('created_at', 'text', (column) => column.notNull())
        .execute();
      await db.schema.createIndex('schedules_agent').on('schedules').columns(['agent_id', 'created_at']).execute();
      await db.schema.createIndex('schedules_status').on('schedules').columns(['status']).execute();
      await db.schema
        .createTable('schedule_fires')
        .addColumn('schedule_id', 'text', (column) => column.notNull().references('schedules.id').onDelete('cascade'))
        .addColumn('due_at', 'text', (column) => column.notNull())
        .addColumn('at', 'text', (column) => column.notNull())
        .addColumn('outcome', 'text', (column) => column.notNull())
        .addColumn('turn_id', 'text')
        .addColumn('error', 'text')
        .addPrimaryKeyConstraint('schedule_fires_pk', ['schedule_id', 'due_at'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('schedule_fires').ifExists().execute();
      await db.schema.dropTable('schedules').ifExists().execute();
    },
  },
  // Work started by a tool call is keyed by the turn and the call (a call id repeats from turn to
  // turn): one workflow, background job or schedule per (turn, call), however often it is retried.
  '2026-12-05-durable-001-source-call-keys': {
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('workflow_runs_source_call').ifExists().execute();
      await db.schema.createIndex('workflow_runs_source_call').on('workflow_runs').columns(['source_turn_id', 'source_call_id']).unique().execute();
      // A retried call may have made a second job before: the first keeps the key.
      await sql`update background_jobs set source_call_id = null
        where source_call_id is not null
          and id not in (select min(id) from background_jobs where source_call_id is not null group by source_turn_id, source_call_id)`.execute(db);
      await db.schema.createIndex('background_jobs_source_call').on('background_jobs').columns(['source_turn_id', 'source_call_id']).unique().execute();
      await db.schema.alterTable('schedules').addColumn('source_call_id', 'text').execute();
      await db.schema.createIndex('schedules_source_call').on('schedules').columns(['source_turn_id', 'source_call_id']).unique().execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('schedules_source_call').ifExists().execute();
      await db.schema.alterTable('schedules').dropColumn('source_call_id').execute();
      await db.schema.dropIndex('background_jobs_source_call').ifExists().execute();
      await db.schema.dropIndex('workflow_runs_source_call').ifExists().execute();
      await db.schema.createIndex('workflow_runs_source_call').on('workflow_runs').columns(['agent_id', 'source_call_id']).unique().execute();
    },
  },
  // A turn's webhook is stored with the turn, and moved to the delivery queue once it has ended.
  '2026-12-05-durable-002-turn-webhooks': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('turn_webhooks')
        .addColumn('turn_id', 'text', (column) => column.primaryKey().references('turns.id').onDelete('cascade'))
        .addColumn('url', 'text', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('enqueued_at', 'text')
        .execute();
      await db.schema.createIndex('turn_webhooks_waiting').on('turn_webhooks').columns(['enqueued_at', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('turn_webhooks').ifExists().execute();
    },
  },
  '2026-12-05-durable-003-creation-keys': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('creation_keys')
        .addColumn('scope', 'text', (column) => column.notNull())
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('key', 'text', (column) => column.notNull())
        .addColumn('body_hash', 'text', (column) => column.notNull())
        .addColumn('resource_id', 'text', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('creation_keys_pk', ['scope', 'kind', 'key'])
        .execute();
      await db.schema.createIndex('creation_keys_created').on('creation_keys').column('created_at').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('creation_keys').ifExists().execute();
    },
  },
  '2026-12-05-durable-004-retention-indexes': {
    // The periodic prune finds finished work by when it ended, on both stores.
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('workflow_runs_finished').on('workflow_runs').column('finished_at').execute();
      await db.schema.createIndex('background_jobs_finished').on('background_jobs').column('finished_at').execute();
      await db.schema.createIndex('schedule_fires_at').on('schedule_fires').column('at').execute();
      await db.schema.createIndex('webhook_attempts_at').on('webhook_attempts').column('at').execute();
      await db.schema.createIndex('durable_jobs_finished').on('durable_jobs').columns(['state', 'finished_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      for (const index of ['durable_jobs_finished', 'webhook_attempts_at', 'schedule_fires_at', 'background_jobs_finished', 'workflow_runs_finished']) {
        await db.schema.dropIndex(index).ifExists().execute();
      }
    },
  },
};
