import { describe, expect, it } from 'vitest';
import { readServerSentEvents, type ServerSentMessage } from '../../src/models/read-server-sent-events.js';

/** A body that arrives in exactly these chunks. */
function bodyOf(chunks: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function read(chunks: readonly (string | Uint8Array)[]): Promise<ServerSentMessage[]> {
  const messages: ServerSentMessage[] = [];
  for await (const batch of readServerSentEvents(bodyOf(chunks))) messages.push(...batch);
  return messages;
}

describe('readServerSentEvents', () => {
  it('reads named and unnamed messages, joins data lines and drops one space after the colon', async () => {
    expect(await read(['event: response.created\ndata: {"a":1}\n\ndata:  two spaces\ndata:none\n\n'])).toEqual([
      { event: 'response.created', data: '{"a":1}' },
      { event: undefined, data: ' two spaces\nnone' },
    ]);
  });

  it('finds lines and messages split anywhere across chunks, with LF, CRLF or CR line ends', async () => {
    const text = 'event: one\r\ndata: 1\r\n\r\nevent: two\rdata: 2\r\rdata: 3\n\n';
    const expected = [
      { event: 'one', data: '1' },
      { event: 'two', data: '2' },
      { event: undefined, data: '3' },
    ];
    expect(await read([text])).toEqual(expected);
    for (let cut = 1; cut < text.length; cut += 1) {
      expect(await read([text.slice(0, cut), text.slice(cut)])).toEqual(expected);
    }
    expect(await read(text.split(''))).toEqual(expected);
  });

  it('keeps a multi-byte character that a chunk boundary cuts in two', async () => {
    const bytes = new TextEncoder().encode('data: 你好\n\n');
    expect(await read([bytes.subarray(0, 7), bytes.subarray(7)])).toEqual([{ event: undefined, data: '你好' }]);
  });

  it('skips comments, other fields and messages without data, and drops a message the stream ends inside of', async () => {
    expect(await read([': keep-alive\n\nid: 7\nretry: 10\n\nevent: empty\n\ndata\n\ndata: cut off'])).toEqual([{ event: undefined, data: '' }]);
  });

  it('hands over the messages of one chunk together', async () => {
    const batches: number[] = [];
    for await (const batch of readServerSentEvents(bodyOf(['data: 1\n\ndata: 2\n\ndata: 3\n\n', 'data: 4\n\n']))) batches.push(batch.length);
    expect(batches).toEqual([3, 1]);
  });

  it('cancels the body when the reader stops early', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('data: more\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const batch of readServerSentEvents(body)) {
      expect(batch[0]?.data).toBe('more');
      break;
    }
    expect(cancelled).toBe(true);
  });
});
