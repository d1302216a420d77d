import type { TurnRecord } from '../store/turn-record.js';

/**
 * A turn's own completion webhook: checked when the turn is asked for, sent when it ends. The
 * turn core defines this; src/webhooks/turn-webhooks.ts implements it, runtime.ts plugs it in.
 */
export interface TurnWebhooks {
  /** Throws the 400 for a URL that could never be delivered to. */
  check(url: string): void;
  /** Stores `turn.completed` | `turn.failed` | `turn.cancelled` for delivery. */
  send(options: { readonly url: string; readonly record: TurnRecord }): Promise<void>;
}
