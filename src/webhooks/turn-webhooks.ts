import type { TurnWebhooks } from '../turns/turn-webhooks.js';
import { checkWebhookUrl } from './check-webhook-url.js';
import type { WebhookService } from './webhook-service.js';

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
