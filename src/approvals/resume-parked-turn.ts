import type { ResponsesEndpoint } from '../models/responses-endpoint.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { TurnStore } from '../store/turn-store.js';
import type { ToolServices } from '../turns/assembly/tool-services.js';
import { agentHomePath } from '../turns/agent-home.js';
import { catalogForTurn } from '../turns/create-turn-tool-catalog.js';
import { driveTurn } from '../turns/drive-turn.js';
import { planTurn } from '../turns/plan-turn.js';
import type { ResumedTurn } from '../turns/turn-approvals.js';
import { TurnRun } from '../turns/turn-run.js';
import type { ApprovalService } from './approval-service.js';
import type { StoredApproval } from '../store/approval-store.js';
import { settleParkedBatch } from './settle-parked-batch.js';
import { continuationRequest, readContinuation } from './turn-continuation.js';

/**
 * Goes on with a parked turn this process has claimed: reads its continuation back from the
 * store, plans the turn again from the stored request (same agent, tools, model — the
 * scripted model at the step it had reached), and drives the loop from the decided batch. The
 * new run numbers its events after the stored ones, so the stream continues without a gap.
 * Resolves once the run exists; `driving` settles when the turn has ended or parked again.
 */
export async function resumeParkedTurn(options: {
  readonly turnId: string;
  readonly config: Config;
  readonly store: TurnStore;
  readonly services: ToolServices;
  readonly modelEndpoint: ResponsesEndpoint | undefined;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly approvals: ApprovalService;
}): Promise<ResumedTurn> {
  const { turnId, config, store, clock } = options;
  const record = await store.getTurn(turnId);
  if (record === undefined) throw new Error(`turn "${turnId}" is gone`);
  const claimed = await store.approvals.takeContinuation(turnId);
  const logger = options.logger.child({ turnId, agentId: record.agentId });
  const history = claimed?.events ?? (await store.listEvents(turnId, { afterSeq: 0, limit: Number.MAX_SAFE_INTEGER }));
  const run = new TurnRun({ id: turnId, agentId: record.agentId, kind: record.kind, store, clock, logger, history });
  const fail = (message: string) => {
    const error = { code: 'resume_failed', message };
    return run.finish(
      { type: 'turn.failed', error, iterations: record.iterations, usage: record.usage },
      { status: 'failed', iterations: record.iterations, usage: record.usage, output: null, error, outcome: 'resume_failed' },
    );
  };
  if (claimed === undefined) return { run, driving: fail('the stored state of this parked turn is missing, so it cannot go on') };

  try {
    const continuation = readContinuation(claimed.continuationJson);
    const request = continuationRequest(continuation);
    const plan = await planTurn({
      request,
      turnId,
      home: agentHomePath({ dataDir: config.dataDir, agentId: record.agentId }),
      config,
      services: options.services,
      store,
      modelEndpoint: options.modelEndpoint,
      logger,
      resumeFrom: { conversation: continuation.conversation, modelSteps: continuation.modelSteps },
    });
    const catalog = catalogForTurn({ tools: plan.tools, model: request.model, configured: config.toolSearchMode });
    const decisions = new Map<string, StoredApproval>(
      claimed.approvals.filter((approval) => approval.iteration === continuation.batch.iteration).map((approval) => [approval.callId, approval]),
    );
    const approvals = options.approvals.forTurn({ run, request, parkedCallIds: claimed.approvals.map((approval) => approval.callId) });
    const driving = driveTurn({
      run,
      plan,
      catalog,
      maxIterations: continuation.maxIterations,
      timeoutMs: continuation.remainingMs,
      config,
      store,
      clock,
      logger,
      ...(approvals === undefined ? {} : { approvals }),
      resume: {
        iterations: continuation.iterations,
        usage: continuation.usage,
        lastText: continuation.lastText,
        responseText: continuation.batch.responseText,
        settle: (settle) => settleParkedBatch({ batch: continuation.batch, decisions, ...settle }),
      },
    });
    return { run, driving, ...(request.webhook === undefined ? {} : { webhookUrl: request.webhook.url }) };
  } catch (error) {
    logger.error({ err: error }, 'a parked turn could not be planned again');
    const reason = error instanceof Error ? error.message : String(error);
    return { run, driving: fail(`the turn could not be set up again after its approvals: ${reason}`) };
  }
}
