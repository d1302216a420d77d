import type { CompletionPolicy } from '../../loop/completion-policy.js';
import type { SubmissionTally } from './submit-result-tool.js';

export const SUBMIT_REMINDER =
  'This task is not finished until you call submit_result. Call submit_result now with the complete result; do not answer in text.';

/**
 * A workflow task ends only through `submit_result`. An answer without a submission gets one
 * reminder; a second one fails the task, as `schema_noncompliance` when the model did submit
 * but was refused, `empty_output` otherwise.
 */
export function createWorkflowTaskPolicy(tally: SubmissionTally): CompletionPolicy {
  let reminded = false;
  return {
    summariseOnExhaustion: false,
    onAnswer() {
      if (!reminded) {
        reminded = true;
        return { kind: 'continue', message: SUBMIT_REMINDER };
      }
      return {
        kind: 'fail',
        error: {
          code: 'no_result_submitted',
          message: `the model ended the task without an accepted submit_result call, even after a reminder${tally.lastRefusal === undefined ? '' : ` (the last submission was refused: ${tally.lastRefusal})`}`,
          reason: tally.rejected > 0 ? 'schema_noncompliance' : 'empty_output',
        },
      };
    },
  };
}
