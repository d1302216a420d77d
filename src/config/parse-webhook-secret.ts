/** `whsec_<base64>` is decoded as Standard Webhooks do; any other value is used as raw bytes. */
export function parseWebhookSecret(value: string): Buffer {
  return value.startsWith('whsec_') ? Buffer.from(value.slice('whsec_'.length), 'base64') : Buffer.from(value, 'utf8');
}
