import type { Clock } from '../clock.js';
import type { TurnEventBody } from '../events/turn-events.js';
import type { AdmissionRequest, IdempotencyClaim } from '../store/coordination-store.js';
import type { ToolCatalog } from '../tools/tool-catalog.js';
import { numberEvent, type NumberedEvent } from './event-window.js';
import type { PlannedTurn } from './plan-turn.js';
import { toToolSnapshot } from './provider-tools.js';
import type { StartTurnRequest } from './turn-origin.js';

/** A planned turn as the store admits it, with its first event. */
export interface TurnAdmission {
  readonly admissionRequest: AdmissionRequest;
  /** `turn.started`: stored with the admission when the turn may start at once; a queued turn emits it when it starts. */
  readonly startedBody: TurnEventBody;
  readonly started: NumberedEvent;
  /** Whether the turn takes its agent's lease (and waits in its queue when the agent is busy). */
  readonly takesAgent: boolean;
}

/** What the store is asked to admit for a planned turn: its record, what it was given, its first event and how it takes its agent. */
export function admissionFor(options: {
  readonly turnId: string;
  readonly request: StartTurnRequest;
  readonly plan: PlannedTurn;
  readonly catalog: ToolCatalog;
  /** This process, as the store names turn owners. */
  readonly owner: string;
  readonly claim: IdempotencyClaim | undefined;
  readonly agentQueueLimit: number;
  readonly clock: Clock;
}): TurnAdmission {
  const { turnId, request, plan, catalog, claim, clock } = options;
  // Workflow task turns have no home tools, and `concurrent` turns accept sharing it: neither takes the agent.
  const takesAgent = request.kind === 'text' && request.multitask !== 'concurrent';
  // Stored with the admission when the turn may start at once; a queued turn emits it when it starts.
  const startedBody: TurnEventBody = {
    type: 'turn.started',
    agentId: request.agent.id,
    kind: request.kind,
    model: plan.model.model,
    tools: plan.tools.map((tool) => tool.name),
    unavailableSources: [...plan.unavailable],
  };
  const started = numberEvent({ turnId, seq: 1, at: clock.now().toISOString(), body: startedBody });
  const admissionRequest: AdmissionRequest = {
    turn: {
      record: {
        id: turnId,
        agentId: request.agent.id,
        kind: request.kind,
        status: 'running',
        model: plan.model.model,
        createdAt: clock.now().toISOString(),
        finishedAt: null,
        iterations: 0,
        output: null,
        error: null,
        outcome: null,
        usage: { inputTokens: 0, outputTokens: 0 },
        ...request.origin,
      },
      owner: options.owner,
      toolsJson: JSON.stringify(toToolSnapshot(plan.tools)),
      unavailableJson: JSON.stringify(plan.unavailable),
      providerToolsJson: catalog.providerTools().json,
      ...(plan.task === undefined ? {} : { task: plan.task }),
      ...(request.webhook === undefined ? {} : { webhookUrl: request.webhook.url }),
    },
    now: () => clock.now().toISOString(),
    startedEvent: started.stored,
    ...(claim === undefined ? {} : { idempotency: claim }),
    ...(takesAgent ? { agent: { mode: request.multitask === 'reject' || request.multitask === 'interrupt' ? request.multitask : 'enqueue', queueLimit: options.agentQueueLimit } } : {}),
  };
  return { admissionRequest, startedBody, started, takesAgent };
}
