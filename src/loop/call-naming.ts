import type { ModelFunctionCall } from '../models/model-client.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';

/** How a call's events name its tool: `name` and, when there is one, `namespace`. */
export interface CallNaming {
  readonly name: string;
  readonly namespace?: string;
}

/**
 * Names a call the same way on every event it gets. A call that reached a tool names the
 * tool (`get-sum` in `everything`), even when the model used the flat provider name
 * (`everything__get-sum`, emulated Tool Search); a call to no tool keeps the model's words.
 */
export function callNaming(call: ModelFunctionCall, tool: WorkerAgentTool | undefined): CallNaming {
  const name = tool?.name ?? call.name;
  const namespace = tool === undefined ? call.namespace : (tool.namespace ?? call.namespace);
  return namespace === undefined ? { name } : { name, namespace };
}
