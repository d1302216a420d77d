/**
 * Remembers how calls failed within a turn, so that a call repeated unchanged with the same
 * error gets a warning instead of another silent retry.
 */
export class FailureMemory {
  readonly #counts = new Map<string, number>();

  /** Records a failure and returns how many times this exact call failed this exact way. */
  record(options: { identity: string; rawArguments: string; message: string }): number {
    const key = `${options.identity}\u0000${options.rawArguments}\u0000${options.message}`;
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    return count;
  }
}

export const REPEATED_FAILURE_WARNING =
  'Warning: this exact call has now failed the same way more than once. Do not repeat it unchanged: change the arguments or take a different approach.';
