import { formatDuration } from '../format/format-duration.js';
import { dispatchToolCalls, type DispatchResult } from '../loop/dispatch-tool-calls.js';
import { executeToolCall, type ToolCallRuntime } from '../loop/execute-tool-call.js';
import type { ParkedCall } from '../loop/call-gate.js';
import type { ParkedBatch } from '../loop/run-turn-loop.js';
import { toolIdentity } from '../tools/tool-map.js';
import type { FunctionCallOutputItem, ModelFunctionCall } from '../models/model-client.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import type { StoredApproval } from '../store/approval-store.js';
import { WAITING_PREFIX } from './create-approval-gate.js';
import { hashArguments } from './hash-arguments.js';

/**
 * Finishes a decided parked batch: denied calls are answered (`tool.failed`, code `denied`,
 * with why), approved ones run — validated again, and only if their arguments still hash to
 * what was approved — with their usual parallel / sequential grouping. Every call of the
 * response then has its output, in call order.
 */
export async function settleParkedBatch(options: {
  readonly batch: ParkedBatch;
  /** The decisions on the batch's parked calls, by call id. */
  readonly decisions: ReadonlyMap<string, StoredApproval>;
  readonly toolMap: ReadonlyMap<string, WorkerAgentTool>;
  readonly parallelLimit: number;
  readonly runtime: ToolCallRuntime;
}): Promise<Pick<DispatchResult, 'outputs' | 'terminatedBy'>> {
  const { batch, runtime } = options;
  const slots: (FunctionCallOutputItem | null)[] = [...batch.outputs];
  const approved: ParkedCall[] = [];
  for (const parked of batch.parked) {
    const decision = options.decisions.get(parked.call.callId);
    if (decision?.decision === 'approve') {
      approved.push(parked);
      continue;
    }
    const identity = toolIdentity(parked.call.name, parked.call.namespace);
    const tool = options.toolMap.get(identity);
    const outcome = await executeToolCall(
      {
        kind: 'rejected',
        call: parked.call,
        identity,
        ...(tool === undefined ? {} : { tool }),
        code: 'denied',
        message: deniedMessage(decision),
        repair: undefined,
        label: parked.request.label.startsWith(WAITING_PREFIX) ? parked.request.label.slice(WAITING_PREFIX.length) : parked.request.label,
      },
      runtime,
    );
    slots[parked.index] = { type: 'function_call_output', call_id: parked.call.callId, output: outcome.output };
  }

  let terminatedBy: DispatchResult['terminatedBy'];
  if (approved.length > 0 && !runtime.signal.aborted) {
    const approvedHash = new Map<ModelFunctionCall, string>(approved.map((parked) => [parked.call, parked.request.argumentsHash]));
    const dispatched = await dispatchToolCalls({
      calls: approved.map((parked) => parked.call),
      toolMap: options.toolMap,
      parallelLimit: options.parallelLimit,
      runtime,
      gate: (ready) =>
        hashArguments(ready.params).hash === approvedHash.get(ready.call)
          ? { kind: 'run' }
          : { kind: 'deny', message: 'its arguments no longer validate to the value that was approved, so it did not run; call it again' },
    });
    approved.forEach((parked, position) => {
      slots[parked.index] = dispatched.slots[position] ?? null;
    });
    terminatedBy = dispatched.terminatedBy;
  }
  const outputs = slots.map(
    (slot, position): FunctionCallOutputItem =>
      slot ?? { type: 'function_call_output', call_id: (batch.calls[position] as ModelFunctionCall).callId, output: 'Not run: the turn was cancelled before this call started.' },
  );
  return terminatedBy === undefined ? { outputs } : { outputs, terminatedBy };
}

function deniedMessage(decision: StoredApproval | undefined): string {
  if (decision?.reason === 'timeout') {
    const waitedMs = Date.parse(decision.expiresAt) - Date.parse(decision.requestedAt);
    return `nobody approved this call within ${formatDuration(waitedMs)}, so it was denied and did not run; ask the user before trying it again`;
  }
  const why = decision?.message === null || decision?.message === undefined ? '' : ` with this reason: "${decision.message}"`;
  return `a person denied this call${why}. It did not run; do not repeat it unchanged, and ask the user if you need it`;
}
