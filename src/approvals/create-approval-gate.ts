import type { CallGate } from '../loop/call-gate.js';
import { activityLabel } from '../loop/execute-tool-call.js';
import { callNaming } from '../loop/call-naming.js';
import { resolveApprovalMode, type ApprovalPolicy } from '../turns/approval-policy.js';
import { hashArguments } from './hash-arguments.js';

export const WAITING_PREFIX = 'Waiting for approval: ';

/**
 * The gate for a turn's policy. A `deny` tool is refused without asking; an `ask` tool is
 * parked with its validated arguments and their hash. A call id the turn already parked once
 * (a model repeating ids) is refused: a decision must name exactly one call.
 */
export function createApprovalGate(options: { readonly policy: ApprovalPolicy; readonly parkedCallIds: Set<string> }): CallGate {
  const { policy, parkedCallIds } = options;
  return (ready) => {
    const { tool, call, params } = ready;
    const mode = resolveApprovalMode({ policy, tool });
    if (mode === 'allow') return { kind: 'run' };
    const label = activityLabel(tool, params);
    if (mode === 'deny') {
      return { kind: 'deny', label, message: `${tool.name} may not be used in this turn (its approval policy is "deny"), so the call did not run; do it another way or ask the user` };
    }
    if (parkedCallIds.has(call.callId)) {
      return { kind: 'deny', label, message: `this call reuses the id "${call.callId.slice(0, 100)}" of another call that waited for approval, so it cannot be approved on its own; call it again` };
    }
    parkedCallIds.add(call.callId);
    const hashed = hashArguments(params);
    return {
      kind: 'park',
      request: {
        ...callNaming(call, tool),
        arguments: hashed.value,
        argumentsHash: hashed.hash,
        label: `${WAITING_PREFIX}${label}`,
      },
    };
  };
}
