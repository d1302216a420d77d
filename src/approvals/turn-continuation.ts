import type { ParkedLoop } from '../turns/turn-approvals.js';
import type { ParkedBatch } from '../loop/run-turn-loop.js';
import type { ConversationItem } from '../models/model-client.js';
import type { TurnRequest } from '../turns/turn-request.js';
import type { TurnUsage } from '../events/turn-events.js';

/**
 * What a parked turn needs to go on in any process: the request it was planned from (less its
 * input), the conversation so far, the parked batch (outputs of the calls that ran, the calls
 * that wait), the counts, and where the scripted model stopped. Stored as JSON with the turn.
 */
export interface TurnContinuation {
  readonly version: 1;
  readonly request: Omit<TurnRequest, 'input'>;
  readonly conversation: readonly ConversationItem[];
  readonly batch: ParkedBatch;
  readonly iterations: number;
  readonly usage: TurnUsage;
  readonly lastText: string;
  readonly modelSteps?: number;
  readonly maxIterations: number;
  readonly remainingMs: number;
}

export function toContinuation(options: { readonly request: TurnRequest; readonly parked: ParkedLoop }): TurnContinuation {
  const { parked } = options;
  const { input: _input, ...request } = options.request;
  const { outcome } = parked;
  return {
    version: 1,
    request,
    conversation: outcome.conversation,
    batch: outcome.batch,
    iterations: outcome.iterations,
    usage: outcome.usage,
    lastText: outcome.lastText,
    ...(parked.modelSteps === undefined ? {} : { modelSteps: parked.modelSteps }),
    maxIterations: parked.maxIterations,
    remainingMs: parked.remainingMs,
  };
}

/** Reads a stored continuation; throws on one this version cannot read. */
export function readContinuation(json: string): TurnContinuation {
  const value = JSON.parse(json) as Partial<TurnContinuation>;
  if (value.version !== 1 || value.request === undefined || value.batch === undefined || value.conversation === undefined) {
    throw new Error('the stored continuation of this turn has a shape this version cannot read');
  }
  return value as TurnContinuation;
}

/** The request a resumed turn is planned from: its stored fields, its input replaced by the stored conversation. */
export function continuationRequest(continuation: TurnContinuation): TurnRequest {
  return { ...continuation.request, input: '(resumed from the stored conversation)' };
}
