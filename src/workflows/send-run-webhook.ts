import type { EngineContext } from './engine-context.js';
import type { WorkflowRunRow } from './workflow-tables.js';

/** Stores the run's `workflow.completed` | `workflow.failed` | `workflow.cancelled` webhook, when it has one. */
export async function sendRunWebhook(context: EngineContext, run: WorkflowRunRow, status: 'completed' | 'failed' | 'cancelled'): Promise<void> {
  if (run.webhook_url === null) return;
  try {
    await context.webhooks.send({ url: run.webhook_url, subjectKind: 'workflow', body: { type: `workflow.${status}`, id: run.id, agentId: run.agent_id, status } });
  } catch (error) {
    context.logger.error({ err: error, workflowId: run.id }, 'could not store the webhook of a workflow run');
  }
}
