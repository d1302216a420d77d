import type { FunctionCallOutputItem } from '../models/model-client.js';
import type { AgentToolResult } from '../tools/tool-result.js';

/** A tool's content in the shape a `function_call_output` carries: text, or parts with images. */
export function toModelOutput(content: AgentToolResult['content']): FunctionCallOutputItem['output'] {
  if (typeof content === 'string') return content;
  if (content.every((part) => part.type === 'text')) return content.map((part) => part.text).join('\n');
  return content.map((part) =>
    part.type === 'text'
      ? { type: 'input_text' as const, text: part.text }
      : { type: 'input_image' as const, image_url: `data:${part.mediaType};base64,${part.data}` },
  );
}
