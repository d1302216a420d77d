/** One `agent()` call as the guest asked for it, in call order. */
export interface GuestCall {
  /** 1, 2, 3 … in the order the script called `agent()`. */
  readonly seq: number;
  readonly prompt: string;
  readonly label: string | null;
  /** The `schema` option as JSON text, or null without one. */
  readonly schemaJson: string | null;
}

/** A stored task result fed back to the guest: the value as JSON text (`null` when the call's attempts ran out). */
export interface FedResult {
  readonly seq: number;
  readonly valueJson: string;
}

/** What the host asks the script worker: run the script from the start, feeding these results round by round. */
export interface ReplayRequest {
  readonly script: string;
  readonly argsJson: string;
  /** Seeds `Math.random`, so a replay takes the same path. */
  readonly seed: number;
  /** What `Date.now()` and `new Date()` answer, for the whole run. */
  readonly nowMs: number;
  /**
   * Results in the rounds they were first fed: the guest runs to quiescence after each round,
   * so it sees them in the same grouping and order every time, however the tasks raced.
   */
  readonly rounds: readonly (readonly FedResult[])[];
  readonly memoryLimitBytes: number;
  readonly cpuLimitMs: number;
}

export type ReplayOutcome =
  /** Blocked on calls without results (every call so far is in `calls`). */
  | { readonly kind: 'waiting'; readonly calls: readonly GuestCall[] }
  | { readonly kind: 'returned'; readonly calls: readonly GuestCall[]; readonly resultJson: string }
  | { readonly kind: 'threw'; readonly calls: readonly GuestCall[]; readonly message: string }
  /** A stored result is for a call this replay never made: the script took another path. */
  | { readonly kind: 'nondeterministic'; readonly calls: readonly GuestCall[]; readonly message: string }
  | { readonly kind: 'out_of_time'; readonly calls: readonly GuestCall[]; readonly message: string }
  | { readonly kind: 'out_of_memory'; readonly calls: readonly GuestCall[]; readonly message: string };
