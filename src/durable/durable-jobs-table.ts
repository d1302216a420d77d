/** The SQLite table behind in-process durable work (see the store's migrations). */
export type DurableJobsDatabase = {
  durable_jobs: {
    id: string;
    queue: string;
    payload_json: string;
    /** `queued` (waiting for run_at) | `active` | `completed` | `failed`. */
    state: string;
    singleton_key: string | null;
    run_at: string;
    /** Deliveries so far. */
    attempt: number;
    locked_by: string | null;
    lease_until: string | null;
    last_error: string | null;
    created_at: string;
    finished_at: string | null;
  };
};
