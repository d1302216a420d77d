import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { formatIssuePath } from '../tools/schema/format-issue-path.js';
import { isJsonObject } from '../json.js';
import { parseArgumentsJson, type RepairRung } from './parse-arguments-json.js';

export type ValidatedArguments<TParams> =
  | { readonly ok: true; readonly params: TParams; readonly repair: RepairRung }
  | { readonly ok: false; readonly message: string; readonly repair: RepairRung | undefined };

const MAX_LISTED_ISSUES = 8;

/**
 * Turns the model's raw argument string into parameters the tool's schema accepts, or a
 * message the model can act on. `execute` never sees raw model output: only what this returns.
 */
export function validateToolArguments<TParams>(options: {
  readonly tool: WorkerAgentTool<TParams>;
  readonly rawArguments: string;
}): ValidatedArguments<TParams> {
  const { tool, rawArguments } = options;
  const parsed = parseArgumentsJson(rawArguments, { acceptsEmpty: () => tool.checkArguments({}).ok });
  if (!parsed.ok) {
    return { ok: false, message: `invalid arguments for ${tool.name}: ${parsed.problem}`, repair: undefined };
  }
  if (!isJsonObject(parsed.value)) {
    return {
      ok: false,
      message: `invalid arguments for ${tool.name}: expected a JSON object, received ${describe(parsed.value)}`,
      repair: parsed.repair,
    };
  }
  const checked = tool.checkArguments(parsed.value);
  if (checked.ok) return { ok: true, params: checked.params, repair: parsed.repair };
  const listed = checked.issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
  const more = checked.issues.length - listed.length;
  return {
    ok: false,
    message: `invalid arguments for ${tool.name}: ${listed.join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
    repair: parsed.repair,
  };
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value;
}
