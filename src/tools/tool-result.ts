import type { JsonObject } from '../json.js';

/** A part of what the model sees: text, or an image (base64) for models that read images. */
export type ToolContentPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly mediaType: string; readonly data: string };

/** Something a tool wants shown to the person, outside the model's view (a chart, a file card …). */
export interface PresentationEvent {
  readonly type: string;
  readonly data?: JsonObject;
}

/** What a tool returns. A tool signals failure by throwing, never by writing "error" here. */
export interface AgentToolResult {
  /** What the model sees. */
  readonly content: string | readonly ToolContentPart[];
  /** Structured details for logs and events; never shown to the model. */
  readonly details?: JsonObject;
  /** Presentation events for the reply, streamed as `tool.presentation`. */
  readonly presentation?: readonly PresentationEvent[];
  /** Ids of actor events the tool completed (recorded with the call). */
  readonly completedActorEventIds?: readonly string[];
  /** Ends the turn after this round; later calls of the batch are answered, not run. */
  readonly terminate?: boolean;
}

/** The text of a result's content, images described by their type. */
export function resultText(content: AgentToolResult['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : `[image ${part.mediaType}]`)).join('\n');
}
