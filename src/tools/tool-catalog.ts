import type { JsonObject } from '../json.js';
import type { ModelResponse } from '../models/model-client.js';
import type { WorkerAgentTool } from './define-worker-tool.js';
import type { TurnEventBody } from '../events/turn-events.js';
import { createToolMap } from './tool-map.js';

/** The provider tool list for the next request, as objects and as the exact JSON text sent. */
export interface ProviderToolList {
  readonly tools: readonly JsonObject[];
  readonly json: string;
  /** A number that changes whenever the list does. */
  readonly version: number;
}

/**
 * What the model may call and what it is shown, per request. Static for most turns; with
 * deferred tools, Tool Search loads more of them as the turn goes on.
 */
export interface ToolCatalog {
  /** Every tool assembled for the turn, deferred ones included, in assembly order. */
  readonly assembled: readonly WorkerAgentTool[];
  /** The tools a call may reach now, by identity (`namespace.name` or `name`). */
  callable(): ReadonlyMap<string, WorkerAgentTool>;
  /** The provider tool definitions for the next request. */
  providerTools(): ProviderToolList;
  /**
   * Told about each model response before its calls run. Native Tool Search happens inside
   * the provider, so this is where its `tool_search_call` items become the same
   * `tool.started` / `tool.completed` activity an emulated search shows.
   */
  observe?(options: ObservedResponse): void;
}

export interface ObservedResponse {
  readonly response: ModelResponse;
  readonly iteration: number;
  readonly emit: (event: TurnEventBody) => void;
}

/** A catalog that never changes: every tool is callable and shown from the first request. */
export function createStaticToolCatalog(options: {
  readonly tools: readonly WorkerAgentTool[];
  readonly toProviderTools: (tools: readonly WorkerAgentTool[]) => JsonObject[];
}): ToolCatalog {
  const map = createToolMap(options.tools);
  const tools = options.toProviderTools(options.tools);
  const list: ProviderToolList = { tools, json: JSON.stringify(tools), version: 1 };
  return { assembled: options.tools, callable: () => map, providerTools: () => list };
}
