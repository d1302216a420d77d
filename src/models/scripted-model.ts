import { setTimeout as sleep } from 'node:timers/promises';
import type { ConversationItem, ModelCallOptions, ModelClient, ModelFunctionCall, ModelRequest, ModelResponse } from './model-client.js';

/** One scripted model response. */
export interface ScriptStep {
  readonly text?: string | undefined;
  readonly calls?:
    | readonly {
        readonly name: string;
        /** The raw string the model would send (may be malformed), or an object to encode. */
        readonly arguments: string | Readonly<Record<string, unknown>>;
        readonly callId?: string | undefined;
        readonly namespace?: string | undefined;
      }[]
    | undefined;
  /** Waits this long before answering (abortable), to demonstrate cancellation. */
  readonly delayMs?: number | undefined;
}

const DELTA_SIZE = 24;

/**
 * A model that answers from a fixed script, one step per request, and with no calls once the
 * script runs out. It produces the same shapes as a real provider, so its turns go through
 * exactly the same validation, repair, dispatch, streaming and storage.
 */
export function createScriptedModel(options: {
  readonly script: readonly ScriptStep[];
  /** The step to answer first: a turn resumed after an approval goes on where it stopped. */
  readonly startAt?: number;
}): ModelClient {
  let position = options.startAt ?? 0;
  return {
    model: 'scripted',
    stepsTaken: () => position,
    async respond(_request: ModelRequest, call: ModelCallOptions): Promise<ModelResponse> {
      call.signal.throwIfAborted();
      const step: ScriptStep = options.script[position] ?? {};
      const stepNumber = position + 1;
      position += 1;
      if (step.delayMs !== undefined && step.delayMs > 0) await sleep(step.delayMs, undefined, { signal: call.signal });

      const text = step.text ?? '';
      for (let offset = 0; offset < text.length; offset += DELTA_SIZE) {
        call.onTextDelta(text.slice(offset, offset + DELTA_SIZE));
      }
      const calls: ModelFunctionCall[] = (step.calls ?? []).map((scripted, index) => ({
        callId: scripted.callId ?? `call_${stepNumber}_${index + 1}`,
        name: scripted.name,
        ...(scripted.namespace === undefined ? {} : { namespace: scripted.namespace }),
        arguments: typeof scripted.arguments === 'string' ? scripted.arguments : JSON.stringify(scripted.arguments),
      }));
      const outputItems: ConversationItem[] = [];
      if (text !== '') outputItems.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
      for (const functionCall of calls) {
        outputItems.push({
          type: 'function_call',
          call_id: functionCall.callId,
          name: functionCall.name,
          arguments: functionCall.arguments,
          ...(functionCall.namespace === undefined ? {} : { namespace: functionCall.namespace }),
        });
      }
      return { text, calls, outputItems, usage: { inputTokens: 0, outputTokens: 0 } };
    },
  };
}
