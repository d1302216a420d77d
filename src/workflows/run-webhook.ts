import type { EnqueueOptions } from '../durable/durable-work.js';
import type { EngineContext } from './engine-context.js';
import type { WorkflowRunRow } from './workflow-tables.js';

/** The delivery job of the run's `workflow.completed` | `workflow.failed` | `workflow.cancelled` webhook, when it has one. */
export function runWebhook(context: EngineContext, run: WorkflowRunRow, status: 'completed' | 'failed' | 'cancelled'): EnqueueOptions | undefined {
  if (run.webhook_url === null) return undefined;
  return context.webhooks.delivery({ url: run.webhook_url, subjectKind: 'workflow', body: { type: `workflow.${status}`, id: run.id, agentId: run.agent_id, status } });
}
