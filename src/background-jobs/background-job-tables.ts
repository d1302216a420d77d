/** The tables behind background jobs (see the store's migrations). */
export type BackgroundJobTables = {
  background_jobs: {
    id: string;
    agent_id: string;
    title: string;
    instructions: string;
    /** The JSON of the job's `WorkRequest`: the agent (job tools removed), its model and webhook. */
    request_json: string;
    /** `running` | `completed` | `failed` | `stopped`. */
    status: string;
    output: string | null;
    error_json: string | null;
    /** Messages ever queued: the job completes only if none came after its last check. */
    message_count: number;
    /** The process driving the job now, and when it last said so. */
    owner: string | null;
    heartbeat_at: string | null;
    source_turn_id: string | null;
    source_call_id: string | null;
    created_at: string;
    finished_at: string | null;
  };
  background_job_turns: {
    job_id: string;
    /** 1, 2, 3 … in the order the job ran them. */
    turn_index: number;
    turn_id: string;
    /** Null while it runs; then `completed` | `failed` | `interrupted` | `stopped`. */
    outcome: string | null;
    output: string | null;
  };
  background_job_messages: {
    id: string;
    job_id: string;
    text: string;
    /** The job turn that got it; null while it waits. */
    turn_index: number | null;
    created_at: string;
  };
  background_job_events: {
    job_id: string;
    seq: number;
    type: string;
    body: string;
  };
};
