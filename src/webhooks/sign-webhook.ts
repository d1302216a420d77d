import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}`
 * with the secret's bytes.
 */
export function signWebhook(options: { readonly secret: Buffer; readonly webhookId: string; readonly timestamp: number; readonly body: string }): string {
  const mac = createHmac('sha256', options.secret).update(`${options.webhookId}.${options.timestamp}.${options.body}`).digest('base64');
  return `v1,${mac}`;
}
