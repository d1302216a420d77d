import { connect } from 'node:net';

export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Writes `request` byte for byte to a fresh TCP connection and reads until the server closes
 * it or `timeoutMs` passes (then rejects). For requests no HTTP client library would send:
 * malformed headers, a body shorter than its Content-Length.
 */
export function rawRequest(options: { port: number; request: string; timeoutMs?: number }): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(options.port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${options.timeoutMs ?? 10_000} ms; got ${JSON.stringify(received.slice(0, 200))}`));
    }, options.timeoutMs ?? 10_000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const [head = '', ...rest] = received.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(options.request);
  });
}
