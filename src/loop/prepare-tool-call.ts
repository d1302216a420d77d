import type { RepairRung } from '../arguments/parse-arguments-json.js';
import { validateToolArguments } from '../arguments/validate-tool-arguments.js';
import type { ModelFunctionCall } from '../models/model-client.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { toolIdentity } from './tool-map.js';

/** A call after lookup and validation: ready to run, or rejected with a message for the model. */
export type PreparedCall =
  | {
      readonly kind: 'ready';
      readonly call: ModelFunctionCall;
      readonly identity: string;
      readonly tool: WorkerAgentTool;
      readonly params: unknown;
      readonly repair: RepairRung;
    }
  | {
      readonly kind: 'rejected';
      readonly call: ModelFunctionCall;
      readonly identity: string;
      readonly code: 'unknown_tool' | 'invalid_arguments';
      readonly message: string;
      readonly repair: RepairRung | undefined;
    };

const MAX_LISTED_TOOLS = 40;

/** Looks the call's tool up (own entries only) and validates its arguments. */
export function prepareToolCall(options: {
  readonly call: ModelFunctionCall;
  readonly toolMap: ReadonlyMap<string, WorkerAgentTool>;
}): PreparedCall {
  const { call, toolMap } = options;
  const identity = toolIdentity(call.name, call.namespace);
  const tool = toolMap.get(identity);
  if (tool === undefined) {
    const names = [...toolMap.keys()];
    const listed = names.slice(0, MAX_LISTED_TOOLS).join(', ');
    const available = names.length === 0 ? 'This turn has no tools.' : `Available tools: ${listed}${names.length > MAX_LISTED_TOOLS ? ', …' : ''}.`;
    return {
      kind: 'rejected',
      call,
      identity,
      code: 'unknown_tool',
      message: `there is no tool named "${identity.slice(0, 100)}" in this turn. ${available}`,
      repair: undefined,
    };
  }
  const validated = validateToolArguments({ tool, rawArguments: call.arguments });
  if (!validated.ok) {
    return { kind: 'rejected', call, identity, code: 'invalid_arguments', message: validated.message, repair: validated.repair };
  }
  return { kind: 'ready', call, identity, tool, params: validated.params, repair: validated.repair };
}
