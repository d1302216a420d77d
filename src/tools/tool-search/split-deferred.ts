import type { WorkerAgentTool } from '../define-worker-tool.js';

/** The tools shown from the first request and the deferred ones, each in assembly order. */
export function splitDeferred(tools: readonly WorkerAgentTool[]): { shown: WorkerAgentTool[]; deferred: WorkerAgentTool[] } {
  const shown: WorkerAgentTool[] = [];
  const deferred: WorkerAgentTool[] = [];
  for (const tool of tools) (tool.deferLoading ? deferred : shown).push(tool);
  return { shown, deferred };
}
