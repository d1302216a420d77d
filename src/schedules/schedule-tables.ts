/** The tables behind schedules (see the store's migrations). */
export type ScheduleTables = {
  schedules: {
    id: string;
    agent_id: string;
    /** `once` | `cron`. */
    kind: string;
    /** once: when it fires (ISO). */
    at: string | null;
    cron: string | null;
    time_zone: string;
    prompt: string;
    /** The JSON of the schedule's `WorkRequest`: agent and tool sources, model, webhook. */
    request_json: string;
    /** `skip` | `enqueue`. */
    overlap: string;
    /** `skip` | `run_once`. */
    missed: string;
    /** `active` | `paused` | `done`. */
    status: string;
    next_fire_at: string | null;
    /** Bumped by pause and resume, so a fire queued before is recognised as stale. */
    generation: number;
    source_turn_id: string | null;
    /** The tool call that made it; with source_turn_id, unique. */
    source_call_id: string | null;
    created_at: string;
  };
  schedule_fires: {
    schedule_id: string;
    /** When it was due (the key: one fire per due time). */
    due_at: string;
    /** When it was handled. */
    at: string;
    /** `starting` | `started` | `skipped_overlap` | `skipped_missed` | `failed`. */
    outcome: string;
    turn_id: string | null;
    error: string | null;
  };
};
