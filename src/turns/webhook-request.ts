import { z } from 'zod';

/** `"webhook": {"url": "https://…"}` on a turn request, `POST /workflows` and the rest. */
export const webhookRequestSchema = z
  .strictObject({ url: z.string().min(1).max(2_048).describe('Where the end of this work is POSTed, signed as Standard Webhooks do.') })
  .describe('Completion webhook; `http://` only to hosts in WEB_FETCH_ALLOW_HOSTS.');

export type WebhookRequest = z.infer<typeof webhookRequestSchema>;

/** What a receiver gets: thin, it reads the rest from the API. */
export interface WebhookBody {
  readonly type: string;
  readonly id: string;
  readonly agentId: string;
  readonly status: string;
}
