import type { TurnRecord } from '../store/turn-record.js';
import { checkWebhookUrl } from './check-webhook-url.js';
import type { WebhookService } from './webhook-service.js';

/** A turn's own completion webhook: checked when the turn is asked for, sent when it ends. */
export interface TurnWebhooks {
  /** Throws the 400 for a URL that could never be delivered to. */
  check(url: string): void;
  /** Stores `turn.completed` | `turn.failed` | `turn.cancelled` for delivery. */
  send(options: { readonly url: string; readonly record: TurnRecord }): Promise<void>;
}

export function createTurnWebhooks(options: { readonly webhooks: WebhookService }): TurnWebhooks {
  const { webhooks } = options;
  return {
    check(url) {
      checkWebhookUrl({ url, allowHosts: webhooks.allowHosts, secretConfigured: webhooks.configured, path: ['webhook', 'url'] });
    },
    async send({ url, record }) {
      const type = record.status === 'completed' ? 'turn.completed' : record.status === 'cancelled' ? 'turn.cancelled' : 'turn.failed';
      await webhooks.send({ url, subjectKind: 'turn', body: { type, id: record.id, agentId: record.agentId, status: record.status } });
    },
  };
}
