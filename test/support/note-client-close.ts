import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Notes when a client's close is first read: the socket's end (its FIN) or error (its RST), in
 * the poll phase. The response's `close` comes a turn or two of the event loop later, and when
 * hundreds of clients leave together that delay is this process's, not theirs. Returns the time
 * (`performance.now()`), undefined until then. The socket's listeners go when the response
 * closes, as a kept-alive socket serves the next request too.
 */
export function noteClientClose(incoming: IncomingMessage, response: ServerResponse): () => number | undefined {
  let closedAt: number | undefined;
  const note = (): void => {
    closedAt ??= performance.now();
  };
  const { socket } = incoming;
  socket.prependOnceListener('end', note);
  socket.prependOnceListener('error', note);
  response.once('close', () => {
    socket.removeListener('end', note);
    socket.removeListener('error', note);
  });
  return () => closedAt;
}
