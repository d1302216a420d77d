import type { Clock } from '../../clock.js';
import type { BrainStore } from '../../brain/brain-store.js';
import type { WorkerAgentTool } from '../define-worker-tool.js';
import { createForgetTool } from './forget-tool.js';
import { createGetPageTool } from './get-page-tool.js';
import { createRecallTool } from './recall-tool.js';
import { createRememberTool } from './remember-tool.js';

/**
 * The Brain's tools for one agent: `remember`, `recall`, `get_page`, `forget` in a main turn;
 * only the read-only `recall` and `get_page` in a workflow task (`readOnly`).
 */
export function createBrainTools(options: { readonly agentId: string; readonly store: BrainStore; readonly clock: Clock; readonly readOnly: boolean }): WorkerAgentTool[] {
  const { agentId, store } = options;
  const reading: WorkerAgentTool[] = [createRecallTool({ agentId, store }), createGetPageTool({ agentId, store })];
  if (options.readOnly) return reading;
  return [createRememberTool({ agentId, store, clock: options.clock }), ...reading, createForgetTool({ agentId, store })];
}
