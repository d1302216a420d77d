import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the service made to the receiver: its `webhook-id` header and the thin body. */
export interface Delivery {
  readonly webhookId: string;
  readonly type: string;
  readonly id: string;
  readonly status: string;
}

/** One GET of a task turn's marker URL (`/mark/<agent>/<seq>/<attempt>`): a side effect of a task turn. */
export interface MarkerHit {
  readonly agentId: string;
  readonly seq: number;
  readonly attempt: number;
  readonly nonce: string;
}

export interface TortureReceiver {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** `127.0.0.1:<port>`, for WEB_FETCH_ALLOW_HOSTS. */
  readonly host: string;
  readonly deliveries: Delivery[];
  readonly hits: MarkerHit[];
  close(): Promise<void>;
}

/**
 * The torture's one loopback server, outliving every kill: it takes the webhooks (`POST /hooks`,
 * answered 200) and counts the task turns' side effects (`GET /mark/...`: web_fetch is the only
 * tool a workflow task turn has that reaches outside the service, so its hits are what a task
 * did). Signatures are not checked here; the webhook tests do that.
 */
export async function startTortureReceiver(): Promise<TortureReceiver> {
  const deliveries: Delivery[] = [];
  const hits: MarkerHit[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = request.url ?? '';
      if (request.method === 'POST' && url.startsWith('/hooks')) {
        const header = request.headers['webhook-id'];
        const body = parseBody(Buffer.concat(chunks).toString('utf8'));
        deliveries.push({ webhookId: typeof header === 'string' ? header : '', type: body.type, id: body.id, status: body.status });
        response.end('ok');
        return;
      }
      const mark = /^\/mark\/([^/]+)\/(\d+)\/(\d+)$/.exec(url);
      if (request.method === 'GET' && mark !== null) {
        const nonce = randomBytes(6).toString('hex');
        hits.push({ agentId: mark[1] ?? '', seq: Number(mark[2]), attempt: Number(mark[3]), nonce });
        response.setHeader('content-type', 'text/plain; charset=utf-8');
        response.end(`marker ${mark[1] ?? ''} task ${mark[2] ?? ''} attempt ${mark[3] ?? ''} nonce=${nonce}\n`);
        return;
      }
      response.statusCode = 404;
      response.end('not here');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    deliveries,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

function parseBody(text: string): { type: string; id: string; status: string } {
  try {
    const body = JSON.parse(text) as { type?: unknown; id?: unknown; status?: unknown };
    const field = (value: unknown) => (typeof value === 'string' ? value : '');
    return { type: field(body.type), id: field(body.id), status: field(body.status) };
  } catch {
    return { type: '(unparsable)', id: '', status: '' };
  }
}
