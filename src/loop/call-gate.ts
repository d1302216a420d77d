import type { JsonValue } from '../json.js';
import type { ModelFunctionCall } from '../models/model-client.js';
import type { PreparedCall } from './prepare-tool-call.js';

export type ReadyCall = Extract<PreparedCall, { kind: 'ready' }>;

/** What a call that waits for a person shows them. */
export interface ApprovalRequest {
  /** The tool's own name and namespace (the call may have used a flat provider name). */
  readonly name: string;
  readonly namespace?: string;
  /** The validated arguments, as JSON. */
  readonly arguments: JsonValue;
  /** Lowercase hex SHA-256 of their canonical JSON (RFC 8785). */
  readonly argumentsHash: string;
  /** "Waiting for approval: Running `rm -rf build`". */
  readonly label: string;
}

/** The gate's word on a validated call: run it now, park it for a person, or refuse it. */
export type GateVerdict =
  | { readonly kind: 'run' }
  | { readonly kind: 'park'; readonly request: ApprovalRequest }
  | { readonly kind: 'deny'; readonly message: string; readonly label?: string };

/** Asked once per validated call, before it runs (approvals, see src/approvals). */
export type CallGate = (call: ReadyCall) => GateVerdict;

/** A call of a response that waits for a decision, at its position in the response. */
export interface ParkedCall {
  readonly index: number;
  readonly call: ModelFunctionCall;
  readonly request: ApprovalRequest;
}
