import { isJsonObject } from '../json.js';
import type { ConversationItem, ModelFunctionCall, ModelResponse } from './model-client.js';
import { ModelError } from './model-client.js';
import type { StreamedResponse } from './response-stream-accumulator.js';

/**
 * Turns the provider's output items into our response: assistant `message` items become
 * `MessageItem`s with `output_text` parts (a refusal counts as text: it is what the model
 * said), `function_call` items become calls (without the provider's item `id`, which a
 * `store: false` request must not refer back to), and everything else travels on as an
 * `OpaqueItem`, unchanged.
 */
export function toModelResponse(streamed: StreamedResponse): ModelResponse {
  const outputItems: ConversationItem[] = [];
  const calls: ModelFunctionCall[] = [];
  let text = '';

  for (const item of streamed.items) {
    if (item['type'] === 'message' && item['role'] === 'assistant') {
      const parts: { readonly type: 'output_text'; readonly text: string }[] = [];
      const content = Array.isArray(item['content']) ? item['content'] : [];
      for (const part of content.filter(isJsonObject)) {
        const partText =
          part['type'] === 'output_text' ? part['text'] : part['type'] === 'refusal' ? part['refusal'] : undefined;
        if (typeof partText === 'string') parts.push({ type: 'output_text', text: partText });
      }
      text += parts.map((part) => part.text).join('');
      outputItems.push({ type: 'message', role: 'assistant', content: parts });
    } else if (item['type'] === 'function_call') {
      const { call_id: callId, name, namespace } = item;
      const argumentsText = typeof item['arguments'] === 'string' ? item['arguments'] : '';
      if (typeof callId !== 'string' || callId === '' || typeof name !== 'string' || name === '') {
        throw new ModelError('the model returned a function_call item without a call_id or name');
      }
      const inNamespace = typeof namespace === 'string' && namespace !== '' ? { namespace } : {};
      calls.push({ callId, name, arguments: argumentsText, ...inNamespace });
      outputItems.push({ type: 'function_call', call_id: callId, name, arguments: argumentsText, ...inNamespace });
    } else {
      outputItems.push({ type: 'opaque', item });
    }
  }

  return {
    text,
    calls,
    outputItems,
    usage: { inputTokens: streamed.inputTokens, outputTokens: streamed.outputTokens },
  };
}
