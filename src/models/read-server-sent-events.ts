/** One Server-Sent Events message: its `event:` name (when it had one) and its `data:` lines joined. */
export interface ServerSentMessage {
  readonly event: string | undefined;
  readonly data: string;
}

/**
 * Reads a `text/event-stream` body (a web stream, or a Node stream's chunks) as the messages
 * each chunk completes, in order, by the WHATWG rules: lines end in LF, CRLF or CR (also when split across chunks), a blank line
 * ends a message, `data:` lines are joined with LF, one space after the colon is dropped,
 * comments (`:`) and other fields (`id:`, `retry:`) are skipped, and a message the stream
 * ends inside of is dropped.
 *
 * The turn loop reads every model response through this instead of the SDK's `Stream`: a
 * profile of the benchmark turn showed the SDK's line decoder, its byte concatenation and
 * one async step per event as a tenth of a plain SDK loop's CPU. Here a chunk is decoded
 * once, split with `indexOf`, and its messages come out together.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentMessage[], void, undefined> {
  const decoder = new TextDecoder('utf-8');
  const parser = new MessageParser();
  // Leaving the loop early (a failure event, an abort) lets go of the connection: a Node
  // stream is destroyed by its iterator's return, a web stream cancelled by `webChunks`.
  for await (const chunk of body instanceof ReadableStream ? webChunks(body) : body) {
    const messages = parser.push(decoder.decode(chunk, { stream: true }));
    if (messages.length > 0) yield messages;
  }
  const messages = parser.push(decoder.decode());
  if (messages.length > 0) yield messages;
}

async function* webChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array, void, undefined> {
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** The line and message state between chunks. */
class MessageParser {
  /** The unfinished last line of the text so far. */
  #partial = '';
  /** The previous text ended in CR: an LF that starts the next one belongs to it. */
  #afterCarriageReturn = false;
  #event: string | undefined;
  #data: string[] = [];

  push(chunk: string): ServerSentMessage[] {
    let text = chunk;
    if (this.#afterCarriageReturn && text.startsWith('\n')) text = text.slice(1);
    if (text === '') return [];
    this.#afterCarriageReturn = text.endsWith('\r');
    if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
    const messages: ServerSentMessage[] = [];
    let end = text.indexOf('\n');
    if (end === -1) {
      this.#partial += text;
      return messages;
    }
    let line = this.#partial + text.slice(0, end);
    this.#partial = '';
    let start: number;
    for (;;) {
      this.#line(line, messages);
      start = end + 1;
      end = text.indexOf('\n', start);
      if (end === -1) break;
      line = text.slice(start, end);
    }
    this.#partial = text.slice(start);
    return messages;
  }

  #line(line: string, messages: ServerSentMessage[]): void {
    if (line === '') {
      if (this.#data.length > 0) messages.push({ event: this.#event, data: this.#data.length === 1 ? (this.#data[0] ?? '') : this.#data.join('\n') });
      this.#event = undefined;
      this.#data = [];
      return;
    }
    const colon = line.indexOf(':');
    if (colon === 0) return;
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
  }
}
