/**
 * A turn's own completion webhook: checked when the turn is asked for, stored with the turn when
 * it is admitted, and sent once the turn has ended. The turn core defines this;
 * src/webhooks/turn-webhook-outbox.ts implements it, runtime.ts plugs it in.
 */
export interface TurnWebhooks {
  /** Throws the 400 for a URL that could never be delivered to. */
  check(url: string): void;
  /**
   * The turn has ended here: its stored webhook (if it has one) goes to the delivery queue now,
   * once. A turn that ended elsewhere (or whose process died first) is found by a sweep.
   */
  ended(turnId: string): Promise<void>;
}
