import type { TurnError } from '../events/turn-events.js';

/** What the loop does when the model answers without calling a tool. */
export type AnswerDecision =
  | { readonly kind: 'final' }
  | { readonly kind: 'continue'; readonly message: string }
  | { readonly kind: 'fail'; readonly error: TurnError };

/** How a kind of turn ends: a text turn takes the answer, a task turn insists on a submission. */
export interface CompletionPolicy {
  onAnswer(options: { readonly text: string; readonly afterToolResults: boolean }): AnswerDecision;
  /** Whether to ask for a summary when the iteration budget runs out. */
  readonly summariseOnExhaustion: boolean;
}

export const EMPTY_ANSWER_NUDGE =
  'Your last reply was empty. Continue the task: call a tool if you need one, or give your final answer to the user.';

/** A text turn: the model's answer ends it, with one nudge if it answers nothing after tool results. */
export function createTextCompletionPolicy(): CompletionPolicy {
  let nudged = false;
  return {
    summariseOnExhaustion: true,
    onAnswer({ text, afterToolResults }) {
      if (text.trim() === '' && afterToolResults && !nudged) {
        nudged = true;
        return { kind: 'continue', message: EMPTY_ANSWER_NUDGE };
      }
      return { kind: 'final' };
    },
  };
}
