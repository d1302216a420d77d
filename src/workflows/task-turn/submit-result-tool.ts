import { z } from 'zod';
import type { JsonObject } from '../../json.js';
import { defineWorkerTool, type WorkerAgentTool } from '../../tools/define-worker-tool.js';
import { formatIssuePath } from '../../tools/schema/format-issue-path.js';
import { compileJsonSchemaValidator } from '../../tools/schema/json-schema-validator.js';
import { toStrictJsonSchema, type StrictSchema } from '../../tools/schema/strict-schema.js';

const submissionEnvelope = z.object({ result: z.unknown() }).strict();

/** The largest accepted result, as UTF-8 JSON: the contract's cap on one workflow task value. */
export const TASK_RESULT_MAX_BYTES = 24 * 1024;

/** The tally a task's completion policy reads: did the model try, and was it refused? */
export interface SubmissionTally {
  rejected: number;
  /** Why the last submission was refused, for the task's failure message. */
  lastRefusal?: string;
}

/** Wraps a task's result schema as `submit_result`'s strict parameters: `{ result: <schema> }`. */
export function compileSubmitResultSchema(resultSchema: JsonObject): StrictSchema {
  return toStrictJsonSchema({
    type: 'object',
    properties: { result: resultSchema },
    required: ['result'],
    additionalProperties: false,
  });
}

/**
 * `submit_result` for one workflow task: strict, sequential. The provider's strict check is
 * only the first gate: the value is validated again against the schema as it was stored with
 * the turn, and only then accepted, which ends the turn. A rejection is an error the model
 * reads, and the turn stays alive so it can correct the value.
 */
export function createSubmitResultTool(options: {
  readonly strictSchema: StrictSchema;
  readonly loadStoredSchema: () => Promise<JsonObject>;
  readonly tally: SubmissionTally;
}): WorkerAgentTool<{ result: unknown }> {
  const { strictSchema, tally } = options;
  return defineWorkerTool<{ result: unknown }>({
    name: 'submit_result',
    description:
      'Submit the final result of this task. Call it exactly once, when the result is complete; the value must match the parameters schema. Submitting ends the task.',
    // The provider sees the strict wrapper; every check of the value happens in `execute`,
    // so each refused submission is counted and answered the same way.
    jsonSchema: strictSchema.schema,
    schema: submissionEnvelope,
    strict: true,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: false,
    describeActivity: () => 'Submitting the result',
    describeCompletedActivity: () => 'Submitted the result',
    async execute(params) {
      const stripped = strictSchema.stripOptionalNulls(params) as { result: unknown };
      const validate = compileJsonSchemaValidator(await options.loadStoredSchema());
      const checked = validate(stripped.result);
      if (!checked.ok) {
        const problems = checked.issues.slice(0, 10).map((issue) => `result${issue.path.length === 0 ? '' : `.${formatIssuePath(issue.path)}`}: ${issue.message}`);
        throw refuse(tally, `the result does not match the task's schema: ${problems.join('; ')}`, 'Fix the value and call submit_result again.');
      }
      // Refused like a schema failure, inside the turn, so the model can make it shorter.
      const bytes = Buffer.byteLength(JSON.stringify(checked.value));
      if (bytes > TASK_RESULT_MAX_BYTES) {
        throw refuse(tally, `the result is ${bytes} bytes of JSON; a task result may be at most ${TASK_RESULT_MAX_BYTES} bytes`, 'Submit a shorter value with submit_result.');
      }
      return { content: 'Result accepted. The task is complete.', details: { accepted: true, result: checked.value }, terminate: true };
    },
  });
}

/** Counts a refused submission and makes the error the model reads: the reason, then what to do. */
function refuse(tally: SubmissionTally, reason: string, advice: string): Error {
  tally.rejected += 1;
  tally.lastRefusal = reason;
  return new Error(`${reason}. ${advice}`);
}
