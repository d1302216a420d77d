import type { RepairRung } from '../arguments/parse-arguments-json.js';
import { validateToolArguments } from '../arguments/validate-tool-arguments.js';
import type { ModelFunctionCall } from '../models/model-client.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { toolIdentity } from '../tools/tool-map.js';

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
      readonly code: 'unknown_tool' | 'invalid_arguments' | 'denied';
      readonly message: string;
      readonly repair: RepairRung | undefined;
      /** The activity label, for a call refused after validation (denied). */
      readonly label?: string;
      /** The tool the call reached, when it reached one (bad arguments, denied): its events name it. */
      readonly tool?: WorkerAgentTool;
    };

const MAX_LISTED_TOOLS = 40;

/** Looks the call's tool up (own entries only) and validates its arguments. */
export function prepareToolCall(options: {
  readonly call: ModelFunctionCall;
  readonly toolMap: ReadonlyMap<string, WorkerAgentTool>;
  /** Tools assembled but not callable yet (deferred, not loaded by Tool Search), by identity. */
  readonly deferred?: ReadonlyMap<string, WorkerAgentTool>;
}): PreparedCall {
  const { call, toolMap } = options;
  const identity = toolIdentity(call.name, call.namespace);
  const tool = toolMap.get(identity);
  if (tool === undefined) {
    return { kind: 'rejected', call, identity, code: 'unknown_tool', message: unknownToolMessage(identity, toolMap, options.deferred), repair: undefined };
  }
  const validated = validateToolArguments({ tool, rawArguments: call.arguments });
  if (!validated.ok) {
    return { kind: 'rejected', call, identity, code: 'invalid_arguments', message: validated.message, repair: validated.repair, tool };
  }
  return { kind: 'ready', call, identity, tool, params: validated.params, repair: validated.repair };
}

function unknownToolMessage(
  identity: string,
  toolMap: ReadonlyMap<string, WorkerAgentTool>,
  deferred: ReadonlyMap<string, WorkerAgentTool> | undefined,
): string {
  const shown = identity.slice(0, 100);
  if (deferred?.has(identity) === true) {
    return `"${shown}" is not loaded yet: call tool_search with paths ["${shown}"] first, then call it`;
  }
  // A tool can be reachable under two names (its identity and a flat provider name): list each tool once.
  const names = [...new Set(toolMap.values())].map((tool) => toolIdentity(tool.name, tool.namespace));
  const listed = names.slice(0, MAX_LISTED_TOOLS).join(', ');
  const available = names.length === 0 ? 'This turn has no tools.' : `Available tools: ${listed}${names.length > MAX_LISTED_TOOLS ? ', …' : ''}.`;
  return `there is no tool named "${shown}" in this turn. ${available}`;
}
