import type { TurnEvent } from '../events/turn-events.js';

/** One chunk of the AI SDK UI message stream (protocol v1), as sent in an SSE `data:` line. */
export type UiMessageChunk = Readonly<Record<string, unknown>> & { readonly type: string };

/**
 * Translates a turn's events, in order, into UI message stream chunks: the turn is one
 * assistant message (`start` … `finish`), each iteration a step, the model's text a text part
 * per iteration, each tool call a tool part (`tool-input-available`, then
 * `tool-output-available` or `tool-output-error`), and each call's activity label a
 * `data-activity` part that is updated in place (same id) as the call goes on.
 */
export class UiMessageChunks {
  #step = 0;
  #openText: string | undefined;
  #textSeen = new Set<number>();
  readonly #inputSent = new Set<string>();

  /** The chunks for one event; `done` once the terminal event has been translated. */
  translate(event: TurnEvent): { readonly chunks: UiMessageChunk[]; readonly done: boolean } {
    const chunks: UiMessageChunk[] = [];
    switch (event.type) {
      case 'turn.started':
        chunks.push({ type: 'start', messageId: event.turnId, messageMetadata: { turnId: event.turnId, agentId: event.agentId, model: event.model } });
        break;
      case 'message.delta':
        this.#enterStep(event.iteration, chunks);
        this.#openTextPart(event.iteration, chunks);
        chunks.push({ type: 'text-delta', id: textId(event.iteration), delta: event.delta });
        break;
      case 'message.completed':
        this.#enterStep(event.iteration, chunks);
        if (!this.#textSeen.has(event.iteration)) {
          this.#openTextPart(event.iteration, chunks);
          chunks.push({ type: 'text-delta', id: textId(event.iteration), delta: event.text });
        }
        this.#closeText(chunks);
        break;
      case 'tool.started':
        this.#enterStep(event.iteration, chunks);
        this.#closeText(chunks);
        this.#inputSent.add(event.callId);
        chunks.push({ type: 'tool-input-available', toolCallId: event.callId, toolName: event.name, input: event.arguments ?? {} });
        chunks.push(activity({ callId: event.callId, name: event.name, label: event.label, status: 'running' }));
        break;
      case 'tool.completed':
        this.#enterStep(event.iteration, chunks);
        chunks.push({ type: 'tool-output-available', toolCallId: event.callId, output: event.output });
        chunks.push(activity({ callId: event.callId, name: event.name, label: event.label, status: 'completed', durationMs: event.durationMs }));
        break;
      case 'tool.failed':
        this.#enterStep(event.iteration, chunks);
        this.#closeText(chunks);
        // A call refused before it ran (unknown tool, bad arguments) still gets its part.
        if (!this.#inputSent.has(event.callId)) chunks.push({ type: 'tool-input-available', toolCallId: event.callId, toolName: event.name, input: {} });
        chunks.push({ type: 'tool-output-error', toolCallId: event.callId, errorText: event.output });
        chunks.push(activity({ callId: event.callId, name: event.name, label: event.label ?? event.name, status: 'failed', durationMs: event.durationMs, error: event.error.code }));
        break;
      case 'tool.presentation':
        break;
      case 'turn.completed':
        this.#closeStep(chunks);
        chunks.push({ type: 'finish', finishReason: 'stop', messageMetadata: { turnId: event.turnId, outcome: event.outcome, iterations: event.iterations, usage: event.usage } });
        return { chunks, done: true };
      case 'turn.failed':
        this.#closeStep(chunks);
        chunks.push({ type: 'error', errorText: event.error.message });
        chunks.push({ type: 'finish', finishReason: 'error', messageMetadata: { turnId: event.turnId, error: event.error, iterations: event.iterations, usage: event.usage } });
        return { chunks, done: true };
      case 'turn.cancelled':
        this.#closeStep(chunks);
        chunks.push({ type: 'abort', reason: event.reason });
        chunks.push({ type: 'finish', finishReason: 'other', messageMetadata: { turnId: event.turnId, cancelled: event.reason, iterations: event.iterations, usage: event.usage } });
        return { chunks, done: true };
    }
    return { chunks, done: false };
  }

  #enterStep(iteration: number, chunks: UiMessageChunk[]): void {
    if (iteration === this.#step) return;
    this.#closeStep(chunks);
    this.#step = iteration;
    chunks.push({ type: 'start-step' });
  }

  #closeStep(chunks: UiMessageChunk[]): void {
    this.#closeText(chunks);
    if (this.#step > 0) chunks.push({ type: 'finish-step' });
    this.#step = 0;
  }

  #openTextPart(iteration: number, chunks: UiMessageChunk[]): void {
    if (this.#openText === textId(iteration)) return;
    this.#closeText(chunks);
    this.#openText = textId(iteration);
    this.#textSeen.add(iteration);
    chunks.push({ type: 'text-start', id: this.#openText });
  }

  #closeText(chunks: UiMessageChunk[]): void {
    if (this.#openText === undefined) return;
    chunks.push({ type: 'text-end', id: this.#openText });
    this.#openText = undefined;
  }
}

const textId = (iteration: number): string => `text_${iteration}`;

function activity(data: { callId: string; name: string; label: string; status: 'running' | 'completed' | 'failed'; durationMs?: number; error?: string }): UiMessageChunk {
  return { type: 'data-activity', id: data.callId, data };
}
