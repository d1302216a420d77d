import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TEST_WEBHOOK_SECRET = `whsec_${Buffer.from('a test key of enough bytes').toString('base64')}`;

export interface WebhookReceiver {
  readonly server: Server;
  readonly url: string;
  /** `127.0.0.1:<port>`, for WEB_FETCH_ALLOW_HOSTS. */
  readonly host: string;
  readonly received: { readonly headers: IncomingHttpHeaders; readonly body: string }[];
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that answers 200 and keeps what it got. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: WebhookReceiver['received'] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/hooks`,
    host: `127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  };
}
