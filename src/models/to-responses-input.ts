import type { JsonObject, JsonValue } from '../json.js';
import type { ConversationItem } from './model-client.js';

/**
 * The conversation as Responses API input items. Our items already are the wire shapes, so
 * this only drops what is ours (the `opaque` wrapper) and leaves out absent optionals.
 */
export function toResponsesInput(items: readonly ConversationItem[]): JsonObject[] {
  return items.map((item): JsonObject => {
    switch (item.type) {
      case 'message':
        return { type: 'message', role: item.role, content: item.content as JsonValue };
      case 'function_call':
        return {
          type: 'function_call',
          call_id: item.call_id,
          name: item.name,
          arguments: item.arguments,
          ...(item.namespace === undefined ? {} : { namespace: item.namespace }),
        };
      case 'function_call_output':
        return { type: 'function_call_output', call_id: item.call_id, output: item.output as JsonValue };
      case 'opaque':
        return item.item;
    }
  });
}
