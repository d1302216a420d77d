/** Every webhook delivery attempt, stored (see the store's migrations). */
export type WebhookTables = {
  webhook_attempts: {
    webhook_id: string;
    attempt: number;
    /** `turn` | `workflow` | … : what the webhook is about. */
    subject_kind: string;
    subject_id: string;
    type: string;
    url: string;
    at: string;
    /** `delivered` | `retrying` | `failed`. */
    outcome: string;
    status_code: number | null;
    error: string | null;
  };
};
