import type { ResponsesEndpoint } from '../models/responses-endpoint.js';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { JsonObject } from '../json.js';
import { createTextCompletionPolicy, type CompletionPolicy } from '../loop/completion-policy.js';
import type { ConversationItem, ModelClient } from '../models/model-client.js';
import type { TurnStore } from '../store/turn-store.js';
import type { StoredTask } from '../store/turn-record.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { assembleTextTurnTools } from './assembly/assemble-text-turn-tools.js';
import type { ToolServices } from './assembly/tool-services.js';
import type { UnavailableSource } from './assembly/tool-source.js';
import { createModelClient } from './create-model-client.js';
import type { TurnRequest } from './turn-request.js';
import type { StartTurnRequest } from './turn-origin.js';
import { invalidRequest } from '../service-error.js';

/** How long assembly may wait on tool sources (MCP servers listing their tools …). */
const ASSEMBLY_TIMEOUT_MS = 10_000;

/** Everything the loop needs for one turn, decided before the turn exists. */
export interface PlannedTurn {
  readonly model: ModelClient;
  readonly tools: readonly WorkerAgentTool[];
  readonly unavailable: readonly UnavailableSource[];
  readonly instructions: string | undefined;
  readonly completion: CompletionPolicy;
  readonly input: ConversationItem[];
  readonly task?: StoredTask;
}

/**
 * Plans a turn from its request: the model, the assembled tools, the instructions and how the
 * turn ends. A caller fault found here (no provider, unknown skill or MCP server, a result
 * schema strict mode cannot take) throws a ServiceError before any turn exists.
 */
export async function planTurn(options: {
  readonly request: StartTurnRequest;
  readonly turnId: string;
  readonly home: string;
  readonly config: Config;
  readonly services: ToolServices;
  readonly store: TurnStore;
  readonly modelEndpoint: ResponsesEndpoint | undefined;
  readonly logger: Logger;
  /** A parked turn going on: its stored conversation (instead of the request's input) and model position. */
  readonly resumeFrom?: { readonly conversation: readonly ConversationItem[]; readonly modelSteps: number | undefined };
}): Promise<PlannedTurn> {
  const { request, home, services, store, logger, resumeFrom } = options;
  const scriptStart = resumeFrom?.modelSteps === undefined ? {} : { scriptStart: resumeFrom.modelSteps };
  const model = createModelClient({ request: request.model, config: options.config.model, endpoint: options.modelEndpoint, logger, ...scriptStart });
  const input = resumeFrom === undefined ? toConversation(request.input) : [...resumeFrom.conversation];
  if (request.kind === 'workflow_task' && request.task !== undefined) {
    const task: StoredTask = { instructions: request.task.instructions, resultSchema: request.task.resultSchema as JsonObject };
    if (services.taskTurns === undefined) throw invalidRequest([{ path: ['kind'], message: 'this server runs no workflow task turns' }]);
    const prepared = services.taskTurns.prepare({
      agent: request.agent,
      home,
      task,
      // The result is checked against the schema as stored with the turn, not this request's copy.
      loadStoredSchema: async () => {
        const stored = await store.getTask(options.turnId);
        if (stored === undefined) throw new Error('the task schema of this turn could not be loaded; try again');
        return stored.resultSchema;
      },
    });
    return { model, input, ...prepared, task };
  }
  const assembled = await assembleTextTurnTools({
    agent: request.agent,
    home,
    services,
    turn: { id: options.turnId, agent: request.agent, model: request.model, webhook: request.webhook, origin: request.origin ?? {} },
    signal: AbortSignal.timeout(ASSEMBLY_TIMEOUT_MS),
    logger,
  });
  return {
    model,
    input,
    tools: assembled.tools,
    unavailable: assembled.unavailable,
    instructions: request.agent.instructions,
    completion: createTextCompletionPolicy(),
  };
}

function toConversation(input: TurnRequest['input']): ConversationItem[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return input.map((item): ConversationItem => {
    if (item.type === 'function_call') {
      return { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments, ...(item.namespace === undefined ? {} : { namespace: item.namespace }) };
    }
    if (item.type === 'function_call_output') return { type: 'function_call_output', call_id: item.call_id, output: item.output };
    return { type: 'message', role: item.role, content: item.content };
  });
}
